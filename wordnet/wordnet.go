// Package wordnet reads the WordNet 3.0 lexical database from its original
// database files (index.POS, data.POS, POS.exc — Debian's wordnet-base
// installs them in /usr/share/wordnet) and paraphrases text by synonym
// substitution, the prompt perturbation of U-HLM Sec. III-A and CU-HLM
// Sec. III-A ("20 paraphrased versions of a text prompt using WordNet").
//
// # Files (wndb(5WN))
//
// index.POS has one line per lemma, sorted, after license lines that start
// with two spaces:
//
//	lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…
//
// with the synsets in decreasing frequency of the lemma's senses. data.POS
// has one line per synset, and synset_offset is the byte offset of that
// line in the file:
//
//	synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id…] p_cnt … | gloss
//
// w_cnt is two hexadecimal digits, words use '_' for spaces and adjectives
// may carry a syntactic marker such as "(a)". POS.exc lists irregular
// inflections ("geese goose"); with the detachment rules of WordNet's
// morphy (Morphy) they map inflected words to lemmas.
//
// Everything is read into memory at Open (about 40 MB for WordNet 3.0,
// half a second); lookups are then map and slice operations. Malformed
// lines give errors, never panics (FuzzParseIndexLine, FuzzParseDataLine).
// Nothing is fetched from the network.
package wordnet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// POS is a part of speech, named as in the file names.
type POS string

// The four parts of speech of the database.
const (
	Noun POS = "noun"
	Verb POS = "verb"
	Adj  POS = "adj"
	Adv  POS = "adv"
)

// All lists the parts of speech in the order lookups try them.
var All = []POS{Noun, Verb, Adj, Adv}

// ErrFormat is wrapped by errors about malformed database files.
var ErrFormat = errors.New("wordnet: malformed database")

// DefaultDir is $HLM_WORDNET, or /usr/share/wordnet (Debian's wordnet-base).
func DefaultDir() string {
	if d := os.Getenv("HLM_WORDNET"); d != "" {
		return d
	}
	return "/usr/share/wordnet"
}

// Entry is one lemma's line of an index file.
type Entry struct {
	Lemma    string
	POS      POS
	Tagsense int     // senses of the lemma tagged in the semantic concordances (a frequency count)
	Offsets  []int64 // its synsets, most frequent sense first
}

// Synset is one line of a data file: its words (lemmas, '_' turned into
// spaces, adjective markers removed).
type Synset struct {
	Offset int64
	POS    POS
	Words  []string
}

// DB is an opened WordNet database.
type DB struct {
	index map[POS]map[string]Entry
	data  map[POS][]byte
	exc   map[POS]map[string][]string
}

// Open reads the database in dir (index and data files of the four parts of
// speech; exception lists when present).
func Open(dir string) (*DB, error) {
	db := &DB{index: map[POS]map[string]Entry{}, data: map[POS][]byte{}, exc: map[POS]map[string][]string{}}
	for _, pos := range All {
		idx, err := readIndex(filepath.Join(dir, "index."+string(pos)), pos)
		if err != nil {
			return nil, err
		}
		db.index[pos] = idx
		if db.data[pos], err = os.ReadFile(filepath.Join(dir, "data."+string(pos))); err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		exc, err := readExc(filepath.Join(dir, string(pos)+".exc"))
		if err != nil {
			return nil, err
		}
		db.exc[pos] = exc
	}
	return db, nil
}

func readIndex(path string, pos POS) (map[string]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wordnet: %w", err)
	}
	defer f.Close()
	out := map[string]Entry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue // license header
		}
		e, err := ParseIndexLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if e.POS != pos && !(pos == Adj && e.POS == "s") {
			return nil, fmt.Errorf("%s:%d: %w: part of speech %q in the %s index", path, n, ErrFormat, e.POS, pos)
		}
		e.POS = pos
		out[e.Lemma] = e
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wordnet: %s: %w", path, err)
	}
	return out, nil
}

// readExc reads an exception list; a missing file is an empty list.
func readExc(path string) (map[string][]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wordnet: %w", err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out[f[0]] = append(out[f[0]], f[1:]...)
		}
	}
	return out, nil
}

// posOf maps the one-letter part of speech of the files.
func posOf(s string) (POS, error) {
	switch s {
	case "n":
		return Noun, nil
	case "v":
		return Verb, nil
	case "a":
		return Adj, nil
	case "s":
		return "s", nil // adjective satellite: filed with the adjectives
	case "r":
		return Adv, nil
	}
	return "", fmt.Errorf("%w: part of speech %q", ErrFormat, s)
}

// ParseIndexLine parses one line of an index file.
func ParseIndexLine(line string) (Entry, error) {
	f := strings.Fields(line)
	bad := func(what string) (Entry, error) {
		return Entry{}, fmt.Errorf("%w: index line %.60q: %s", ErrFormat, line, what)
	}
	if len(f) < 6 {
		return bad("too few fields")
	}
	pos, err := posOf(f[1])
	if err != nil {
		return Entry{}, err
	}
	synsets, err1 := strconv.Atoi(f[2])
	ptrs, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || synsets < 1 || ptrs < 0 || len(f) != 4+ptrs+2+synsets {
		return bad("counts do not match the fields")
	}
	tag, err := strconv.Atoi(f[4+ptrs+1])
	if err != nil || tag < 0 {
		return bad("tagsense_cnt")
	}
	e := Entry{Lemma: f[0], POS: pos, Tagsense: tag}
	for _, s := range f[4+ptrs+2:] {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil || off < 0 || len(s) != 8 {
			return bad("synset offset " + strconv.Quote(s))
		}
		e.Offsets = append(e.Offsets, off)
	}
	return e, nil
}

// ParseDataLine parses the words of one line of a data file.
func ParseDataLine(line string) (Synset, error) {
	f := strings.Fields(line)
	bad := func(what string) (Synset, error) {
		return Synset{}, fmt.Errorf("%w: data line %.60q: %s", ErrFormat, line, what)
	}
	if len(f) < 6 {
		return bad("too few fields")
	}
	off, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || off < 0 {
		return bad("offset")
	}
	pos, err := posOf(f[2])
	if err != nil {
		return Synset{}, err
	}
	if pos == "s" {
		pos = Adj
	}
	w, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil || w == 0 || len(f) < 4+2*int(w) {
		return bad("word count")
	}
	s := Synset{Offset: off, POS: pos}
	for i := 0; i < int(w); i++ {
		word := f[4+2*i]
		if j := strings.IndexByte(word, '('); j > 0 && strings.HasSuffix(word, ")") {
			word = word[:j] // adjective marker: (a), (p), (ip)
		}
		s.Words = append(s.Words, strings.ReplaceAll(word, "_", " "))
	}
	return s, nil
}

// Lookup returns the index entry of a lemma (lower case, spaces as '_').
func (db *DB) Lookup(lemma string, pos POS) (Entry, bool) {
	e, ok := db.index[pos][strings.ReplaceAll(strings.ToLower(lemma), " ", "_")]
	return e, ok
}

// Synset reads the synset at an offset of a part of speech's data file.
func (db *DB) Synset(pos POS, off int64) (Synset, error) {
	data := db.data[pos]
	if off < 0 || off >= int64(len(data)) {
		return Synset{}, fmt.Errorf("%w: offset %d outside data.%s (%d bytes)", ErrFormat, off, pos, len(data))
	}
	line := data[off:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	s, err := ParseDataLine(string(line))
	if err != nil {
		return Synset{}, err
	}
	if s.Offset != off {
		return Synset{}, fmt.Errorf("%w: data.%s at %d holds synset %d", ErrFormat, pos, off, s.Offset)
	}
	return s, nil
}

// rule is a morphy detachment rule: strip suffix, append repl.
type rule struct{ suffix, repl string }

// rules are the detachment rules of WordNet's morphy (morph.c).
var rules = map[POS][]rule{
	Noun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// Morphy returns the lemmas of pos a word form can be (WordNet's morphy):
// the form itself when it is a lemma, its exception-list bases, and the
// detachment rules' results that are lemmas. No duplicates; the form
// itself first.
func (db *DB) Morphy(word string, pos POS) []string {
	w := strings.ToLower(word)
	var out []string
	add := func(l string) {
		if _, ok := db.index[pos][l]; ok {
			for _, o := range out {
				if o == l {
					return
				}
			}
			out = append(out, l)
		}
	}
	add(w)
	for _, b := range db.exc[pos][w] {
		add(b)
	}
	for _, r := range rules[pos] {
		if strings.HasSuffix(w, r.suffix) && len(w) > len(r.suffix) {
			add(w[:len(w)-len(r.suffix)] + r.repl)
		}
	}
	return out
}
