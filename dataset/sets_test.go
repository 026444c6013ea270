package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shared is the shared material directory, relative to this package.
const shared = "../../shared"

// skipWithoutShared skips the test when a shared file is absent.
func skipWithoutShared(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not present (%v); these tests read %s", err, shared)
	}
}

// TestLoadSharedSets loads every named set from its default file and pins
// the count and the first example.
func TestLoadSharedSets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		refs      int // examples with a non-empty Reference
		id        string
		prompt    string
		reference string
		answer    string
	}{
		{"alpaca", 5000, 4998, "alpaca/0",
			"Below is an instruction that describes a task, paired with an input that provides further context. " +
				"Write a response that appropriately completes the request.\n\n### Instruction:\n" +
				"Are the two sentences below grammatically correct? Output yes or no.\n\n### Input:\n" +
				"Sentence 1: I am going to the store.\nSentence 2: I goes to the store.\n\n### Response:",
			"No", ""},
		{"alpaca-seed", 175, 175, "alpaca-seed/seed_task_0",
			"Below is an instruction that describes a task. Write a response that appropriately completes the request.\n\n" +
				"### Instruction:\nIs there anything I can eat for a breakfast that doesn't include eggs, yet includes protein, " +
				"and has roughly 700-1000 calories?\n\n### Response:",
			"Yes, you can have 1 oatmeal banana protein shake and 4 strips of bacon. The oatmeal banana protein shake may " +
				"contain 1/2 cup oatmeal, 60 grams whey protein powder, 1/2 medium banana, 1tbsp flaxseed oil and 1/2 cup " +
				"watter, totalling about 550 calories. The 4 strips of bacon contains about 200 calories.", ""},
		{"alpaca-eval", 805, 803, "alpaca-eval/0",
			"What are the names of some famous actors that started their careers on Broadway?",
			"Some famous actors that started their careers on Broadway are Tom Hanks, Meryl Streep, and Christopher Walken.", ""},
		{"creak", 1371, 1371, "creak/dev_0",
			"Is the following sentence factually correct?\n\"Eating soup means eating only solids.\"\n" +
				"Explain briefly, then answer yes or no.\nAnswer:",
			"Soup is mainly liquid sometimes with bits of food inside. So, the answer is no.", "no"},
		{"strategyqa", 229, 229, "strategyqa/e0044a7b4d146d611e73",
			"Question: Will the Albany in Georgia reach a hundred thousand occupants before the one in New York?\n" +
				"Explain briefly, then answer yes or no.\nAnswer:",
			"Albany, GA has around 75,000 people. Albany, NY has almost 100,000 people. So, the answer is no.", "no"},
		{"qed", 1355, 1355, "qed/-3290814144789249484",
			"Passage: The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen , of Germany , who " +
				"received 150,782 SEK , which is equal to 7,731,004 SEK in December 2007 . John Bardeen is the only laureate " +
				"to win the prize twice -- in 1956 and 1972 . Maria Skłodowska - Curie also won two Nobel Prizes , for physics " +
				"in 1903 and chemistry in 1911 . William Lawrence Bragg was , until October 2014 , the youngest ever Nobel " +
				"laureate ; he won the prize in 1915 at the age of 25 . Two women have won the prize : Curie and Maria " +
				"Goeppert - Mayer ( 1963 ) . As of 2017 , the prize has been awarded to 206 individuals . There have been six " +
				"years in which the Nobel Prize in Physics was not awarded ( 1916 , 1931 , 1934 , 1940 -- 1942 ) .\n" +
				"Question: who got the first nobel prize in physics?\nExplain briefly using the passage, then answer.\nAnswer:",
			"The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen , of Germany , who received " +
				"150,782 SEK , which is equal to 7,731,004 SEK in December 2007 . So, the answer is Wilhelm Conrad Röntgen.",
			"Wilhelm Conrad Röntgen"},
		{"tinystories", 19, 0, filepath.Join(shared, "data/tinystories/TinyStories-valid-sample.txt") + "#0",
			"once upon a time there was a little girl who wanted to explore the world.", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := Default(tc.name, shared)
			skipWithoutShared(t, path)
			ex, err := Load(tc.name, path)
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != tc.n {
				t.Errorf("%d examples, want %d", len(ex), tc.n)
			}
			refs := 0
			ids := map[string]bool{}
			for _, e := range ex {
				if strings.TrimSpace(e.Prompt) == "" {
					t.Errorf("%s: empty prompt", e.ID)
				}
				if e.Reference != "" {
					refs++
				}
				if ids[e.ID] {
					t.Errorf("duplicate id %s", e.ID)
				}
				ids[e.ID] = true
			}
			if refs != tc.refs {
				t.Errorf("%d examples with a reference, want %d", refs, tc.refs)
			}
			got := ex[0]
			if got.ID != tc.id || got.Prompt != tc.prompt || got.Reference != tc.reference || got.Answer != tc.answer {
				t.Errorf("first example\n got %+q\nwant %+q", got, Example{ID: tc.id, Prompt: tc.prompt, Reference: tc.reference, Answer: tc.answer})
			}
		})
	}
}

// TestLoadOtherSplits counts the splits that are not the defaults.
func TestLoadOtherSplits(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		n, refs    int
	}{
		{"creak", "data/creak/train.json", 10176, 10176},
		{"creak", "data/creak/contrast_set.json", 500, 500},
		{"creak", "data/creak/test_without_labels.json", 1371, 0},
		{"strategyqa", "data/strategyqa/train.json", 2061, 2061},
		{"tinystories", "data/tinystories/cs336_tinystories_sample.txt", 5, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(shared, tc.file)
			skipWithoutShared(t, path)
			ex, err := Load(tc.name, path)
			if err != nil {
				t.Fatal(err)
			}
			refs := 0
			for _, e := range ex {
				if e.Reference != "" {
					refs++
				}
			}
			if len(ex) != tc.n || refs != tc.refs {
				t.Errorf("%d examples, %d with references; want %d, %d", len(ex), refs, tc.n, tc.refs)
			}
		})
	}
	path := filepath.Join(shared, "data/creak/contrast_set.json")
	skipWithoutShared(t, path)
	ex, _ := LoadCREAK(path)
	if want := "The answer is yes."; ex[0].Reference != want { // explanation "n/a"
		t.Errorf("contrast set reference %q, want %q", ex[0].Reference, want)
	}
}

func TestDefaultAndNames(t *testing.T) {
	names := Names()
	if len(names) != 9 {
		t.Errorf("Names() = %v", names)
	}
	for _, n := range names {
		p := Default(n, "/s")
		if (p == "") != (n == "prompts" || HasBuiltin(n)) {
			t.Errorf("Default(%q) = %q", n, p)
		}
		if p != "" && !strings.HasPrefix(p, filepath.Join("/s", "data")+string(filepath.Separator)) {
			t.Errorf("Default(%q) = %q: not under /s/data", n, p)
		}
	}
	if Default("nope", "/s") != "" {
		t.Error("Default of an unknown name is not empty")
	}
	if _, err := Load("nope", "x"); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("Load(nope) error %v, want ErrUnknownDataset", err)
	}
	if _, err := Load("alpaca", filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
}

func TestTemplates(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{AlpacaPrompt("Say hi.", ""), "Below is an instruction that describes a task. Write a response that appropriately " +
			"completes the request.\n\n### Instruction:\nSay hi.\n\n### Response:"},
		{AlpacaPrompt("Translate.", "chat"), "Below is an instruction that describes a task, paired with an input that " +
			"provides further context. Write a response that appropriately completes the request.\n\n### Instruction:\n" +
			"Translate.\n\n### Input:\nchat\n\n### Response:"},
		{cotReference("Because", "yes"), "Because. So, the answer is yes."},
		{cotReference("Because!", "no"), "Because! So, the answer is no."},
		{cotReference("  ", "no"), "The answer is no."},
		{cotReference("Because.", ""), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
