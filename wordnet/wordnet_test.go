package wordnet

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeDB writes a small database in WordNet's format into a temporary
// directory: synsets per part of speech (words joined by '_' for spaces),
// with the byte offsets and index lines computed as wndb(5WN) defines
// them. Each lemma's tagsense count is given per part of speech.
func writeDB(t testing.TB, synsets map[POS][][]string, tag map[POS]map[string]int, exc map[POS]string) string {
	t.Helper()
	dir := t.TempDir()
	letter := map[POS]string{Noun: "n", Verb: "v", Adj: "a", Adv: "r"}
	for _, pos := range All {
		var data strings.Builder
		data.WriteString("  1 This is a test database in the WordNet format.\n")
		offsets := map[string][]int64{}
		for _, words := range synsets[pos] {
			off := int64(data.Len())
			fmt.Fprintf(&data, "%08d 03 %s %02x", off, letter[pos], len(words))
			for _, w := range words {
				fmt.Fprintf(&data, " %s 0", w)
				l := strings.ToLower(strings.TrimSuffix(w, "(a)"))
				offsets[l] = append(offsets[l], off)
			}
			data.WriteString(" 000 | a gloss  \n")
		}
		if err := os.WriteFile(filepath.Join(dir, "data."+string(pos)), []byte(data.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var lemmas []string
		for l := range offsets {
			lemmas = append(lemmas, l)
		}
		slices.Sort(lemmas)
		var index strings.Builder
		index.WriteString("  1 This is a test database in the WordNet format.\n")
		for _, l := range lemmas {
			fmt.Fprintf(&index, "%s %s %d 0 %d %d", l, letter[pos], len(offsets[l]), len(offsets[l]), tag[pos][l])
			for _, o := range offsets[l] {
				fmt.Fprintf(&index, " %08d", o)
			}
			index.WriteString("  \n")
		}
		if err := os.WriteFile(filepath.Join(dir, "index."+string(pos)), []byte(index.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if exc[pos] != "" {
			if err := os.WriteFile(filepath.Join(dir, string(pos)+".exc"), []byte(exc[pos]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func testDB(t testing.TB) *DB {
	dir := writeDB(t, map[POS][][]string{
		Noun: {{"car", "auto", "automobile", "motorcar"}, {"car", "railcar"}, {"goose"}, {"dog", "domestic_dog"}, {"house", "home"}},
		Verb: {{"run", "race"}, {"house", "shelter"}},
		Adj:  {{"happy(a)"}, {"happy", "glad", "felicitous"}, {"big", "large"}},
	}, map[POS]map[string]int{
		Noun: {"car": 9, "house": 20, "dog": 3},
		Verb: {"run": 30, "house": 2},
		Adj:  {"happy": 5, "big": 7},
	}, map[POS]string{Noun: "geese goose\n"})
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestOpenAndLookup(t *testing.T) {
	db := testDB(t)
	e, ok := db.Lookup("Car", Noun)
	if !ok || len(e.Offsets) != 2 || e.Tagsense != 9 {
		t.Fatalf("Lookup(car) = %+v, %v", e, ok)
	}
	s, err := db.Synset(Noun, e.Offsets[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"car", "auto", "automobile", "motorcar"}; !slices.Equal(s.Words, want) {
		t.Errorf("synset words %q, want %q", s.Words, want)
	}
	if _, err := db.Synset(Noun, e.Offsets[0]+1); err == nil {
		t.Error("an offset inside a line: no error")
	}
	if got := db.Morphy("geese", Noun); !slices.Equal(got, []string{"goose"}) {
		t.Errorf("Morphy(geese) = %q", got)
	}
	if got := db.Morphy("cars", Noun); !slices.Equal(got, []string{"car"}) {
		t.Errorf("Morphy(cars) = %q", got)
	}
	if got := db.Morphy("houses", Verb); !slices.Equal(got, []string{"house"}) {
		t.Errorf("Morphy(houses, verb) = %q", got)
	}
}

func TestSynonyms(t *testing.T) {
	p := Paraphraser{DB: testDB(t), Senses: 2}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"car", []string{"auto", "automobile", "motorcar", "railcar"}},
		{"Cars", []string{"autos", "automobiles", "motorcars", "railcars"}}, // plural noun
		{"house", []string{"home"}},                                         // noun: tagged more often than the verb
		{"happy", []string{"glad", "felicitous"}},                           // adjective marker stripped, the word itself left out
		{"dog", []string{"domestic dog"}},
		{"the", nil},   // stopword
		{"goose", nil}, // no synonym
		{"zebra", nil}, // unknown
		{"run", []string{"race"}},
	} {
		if got := p.Synonyms(tc.word); !slices.Equal(got, tc.want) {
			t.Errorf("Synonyms(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestParaphrasesAsRepeatedCalls: Paraphrases(text, m) gives the texts of m
// calls of Paraphrase on the same random stream.
func TestParaphrasesAsRepeatedCalls(t *testing.T) {
	p := Paraphraser{DB: testDB(t), Rate: 0.5}
	text := "The happy dog ran to the car, and the house's door was big!"
	r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	got := p.Paraphrases(text, 8, r1)
	for i := range got {
		if want := p.Paraphrase(text, r2); got[i] != want {
			t.Fatalf("paraphrase %d: %q, want %q", i, got[i], want)
		}
	}
	if r1.Uint64() != r2.Uint64() {
		t.Error("the streams drew different amounts")
	}
}

// TestParaphrase: same seed, same paraphrase; punctuation, spacing and
// the words not replaced are kept; capitalization follows the original;
// with rate 1 every candidate is replaced.
func TestParaphrase(t *testing.T) {
	p := Paraphraser{DB: testDB(t), Rate: 1}
	text := "The happy dog ran to the CAR, and the house's door was big!"
	a := p.Paraphrase(text, rand.New(rand.NewPCG(1, 2)))
	b := p.Paraphrase(text, rand.New(rand.NewPCG(1, 2)))
	if a != b {
		t.Fatalf("not reproducible: %q vs %q", a, b)
	}
	if !(strings.HasPrefix(a, "The glad domestic dog ran to the ") || strings.HasPrefix(a, "The felicitous domestic dog ran to the ")) ||
		!strings.HasSuffix(a, ", and the house's door was large!") || strings.Contains(a, "CAR,") {
		t.Errorf("paraphrase %q", a)
	}
	up := false
	for _, w := range []string{"AUTO,", "AUTOMOBILE,", "MOTORCAR,", "RAILCAR,"} {
		up = up || strings.Contains(a, w)
	}
	if !up {
		t.Errorf("CAR not replaced in capitals: %q", a)
	}
	if got := p.Paraphrase("nothing to see here", rand.New(rand.NewPCG(1, 2))); got != "nothing to see here" {
		t.Errorf("no candidates: %q", got)
	}
	// Rate 0.3 of 4 candidates: one word.
	q := Paraphraser{DB: p.DB, Rate: 0.3}
	diff := 0
	orig, para := strings.Fields(text), strings.Fields(q.Paraphrase(text, rand.New(rand.NewPCG(3, 4))))
	for i := range orig {
		if i < len(para) && orig[i] != para[i] {
			diff++
		}
	}
	if diff != 1 {
		t.Errorf("rate 0.3 of 4 candidates replaced %d words", diff)
	}
}

// TestRealWordNet reads Debian's wordnet-base when it is installed.
func TestRealWordNet(t *testing.T) {
	dir := DefaultDir()
	if _, err := os.Stat(filepath.Join(dir, "index.noun")); err != nil {
		t.Skipf("WordNet database not found in %s (apt-get install wordnet-base, or set HLM_WORDNET): %v", dir, err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := Paraphraser{DB: db}
	if got := p.Synonyms("car"); !slices.Contains(got, "automobile") {
		t.Errorf("Synonyms(car) = %q", got)
	}
	if got := p.Synonyms("happy"); !slices.Contains(got, "felicitous") {
		t.Errorf("Synonyms(happy) = %q", got)
	}
	if got := db.Morphy("geese", Noun); !slices.Equal(got, []string{"goose"}) {
		t.Errorf("Morphy(geese) = %q", got)
	}
	prompt := "Once upon a time, there was a little girl named Lily. She loved to play with her big red ball."
	rng := rand.New(rand.NewPCG(0, 0))
	changed := 0
	for range 20 {
		para := p.Paraphrase(prompt, rng)
		if para != prompt {
			changed++
		}
		if len(strings.Fields(para)) < len(strings.Fields(prompt)) {
			t.Errorf("paraphrase lost words: %q", para)
		}
	}
	t.Logf("e.g. %q", p.Paraphrase(prompt, rng))
	if changed < 18 {
		t.Errorf("only %d of 20 paraphrases differ from the prompt", changed)
	}
}

func FuzzParseIndexLine(f *testing.F) {
	f.Add("car n 5 6 @ ~ #m #p %p - 5 2 02958343 02959942 02960501 02960352 02934451  ")
	f.Add("happy a 4 5 ! & ^ = + 4 2 01148283 01048406 02565584 01000442")
	f.Add("x n 1 0 1 0 0000001")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseIndexLine(line)
		if err == nil && (e.Lemma == "" || len(e.Offsets) == 0) {
			t.Errorf("accepted %q as %+v", line, e)
		}
	})
}

func FuzzParseDataLine(f *testing.F) {
	f.Add("01148283 00 a 01 happy 0 018 ^ 00362467 a 0000 | enjoying or showing joy")
	f.Add("00000010 03 n 02 car 0 auto 0 000 | a gloss")
	f.Add("1 2 s ff a 0")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := ParseDataLine(line)
		if err == nil && len(s.Words) == 0 {
			t.Errorf("accepted %q with no words", line)
		}
	})
}
