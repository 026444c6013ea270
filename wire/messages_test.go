package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

func TestUploadRoundTripAndGolden(t *testing.T) {
	u := &Upload{Round: 7, Committed: []int32{5, 300}, CommittedProb: []float32{0.5, 0.25},
		Drafts: []Draft{{Token: 2, Bits: 12, Payload: []byte{0xab, 0xc0}}}, Check: 0x0102030405060708, HasCheck: true}
	b := AppendUpload(nil, u)
	// round=7 | flags=3 | 2 committed: 05, ac 02 | 0.5, 0.25 | 1 draft: token 02, bits 0c, ab c0 | check
	want := "07000000" + "03" + "02" + "05" + "ac02" + "0000003f" + "0000803e" + "01" + "02" + "0c" + "abc0" + "0807060504030201"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("upload bytes\n got %s\nwant %s", got, want)
	}
	back, err := ParseUpload(b, 512)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, u) {
		t.Fatalf("round trip: %+v, want %+v", back, u)
	}
}

func TestVerdictRoundTripAndGolden(t *testing.T) {
	v := &Verdict{Round: 1, Accepted: 3, Token: 130, Resampled: true, CommittedTarget: []float32{1}}
	b := AppendVerdict(nil, v)
	want := "01000000" + "03" + "03" + "8201" + "01" + "0000803f"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("verdict bytes\n got %s\nwant %s", got, want)
	}
	back, err := ParseVerdict(b, 512)
	if err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

// TestVerdictDraftIndex: list matching names the accepted draft (flag 4,
// a varint after the token); index 0 is implied and never sent, and an
// index of 0 or >= MaxDrafts on the wire is refused.
func TestVerdictDraftIndex(t *testing.T) {
	v := &Verdict{Round: 2, Accepted: 1, Token: 7, Resampled: true, Draft: 3}
	b := AppendVerdict(nil, v)
	want := "02000000" + "05" + "01" + "07" + "03"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("verdict bytes\n got %s\nwant %s", got, want)
	}
	back, err := ParseVerdict(b, 512)
	if err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	for _, bad := range []string{"02000000" + "05" + "01" + "07" + "00", "02000000" + "05" + "01" + "07" + "8002"} {
		raw, _ := hex.DecodeString(bad)
		if _, err := ParseVerdict(raw, 512); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

// TestUploadTree: a tree upload (flag 4) carries each draft's parent + 1
// after the drafts; parents must come before their children, and a tree
// has 1 to MaxTreeNodes nodes.
func TestUploadTree(t *testing.T) {
	u := &Upload{Round: 3, Committed: []int32{}, Drafts: []Draft{{Token: 5, Bits: 4, Payload: []byte{0xf0}}, {Token: 6}, {Token: 7, Bits: 1, Payload: []byte{0x80}}},
		Parents: []int32{-1, -1, 0}}
	b := AppendUpload(nil, u)
	// round 3 | flags 4 | 0 committed | 3 drafts: 05 04 f0, 06 00, 07 01 80 | parents+1: 0 0 1
	want := "03000000" + "04" + "00" + "03" + "0504f0" + "0600" + "070180" + "00" + "00" + "01"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("upload bytes\n got %s\nwant %s", got, want)
	}
	back, err := ParseUpload(b, 512)
	if err != nil || !reflect.DeepEqual(back, u) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	for name, bad := range map[string]string{
		"parent after its child": "03000000" + "04" + "00" + "02" + "0500" + "0600" + "02" + "00",
		"parent is itself":       "03000000" + "04" + "00" + "01" + "0500" + "01",
		"empty tree":             "03000000" + "04" + "00" + "00",
		"parents missing":        "03000000" + "04" + "00" + "01" + "0500",
	} {
		raw, _ := hex.DecodeString(bad)
		if _, err := ParseUpload(raw, 512); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	v := &Verdict{Round: 3, Accepted: 2, Token: 9, Node: 3, HasNode: true}
	vb := AppendVerdict(nil, v)
	if got, want := hex.EncodeToString(vb), "03000000"+"08"+"02"+"09"+"03"; got != want {
		t.Fatalf("verdict bytes\n got %s\nwant %s", got, want)
	}
	if back, err := ParseVerdict(vb, 512); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("verdict round trip: %+v, %v", back, err)
	}
}

func TestMalformed(t *testing.T) {
	good := AppendUpload(nil, &Upload{Round: 1, Committed: []int32{1}, Drafts: []Draft{{Token: 3, Bits: 9, Payload: []byte{1, 2}}}})
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte{}, good...), 0),
		"flags":     append([]byte{1, 0, 0, 0, 0x80}, good[5:]...),
	} {
		if _, err := ParseUpload(b, 512); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// A verdict with a flag this version does not know (16).
	if _, err := ParseVerdict([]byte{1, 0, 0, 0, 0x10, 0, 3}, 512); !errors.Is(err, ErrMessage) {
		t.Errorf("unknown verdict flags: err = %v", err)
	}
	// A list length beyond the bytes left is refused before anything is
	// allocated for it: an Open of 21 bytes that declares a prefix of
	// MaxPrefix tokens does not cost 4 MiB.
	declared := binary.AppendUvarint(AppendOpen(nil, &Open{})[:17], MaxPrefix)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 16 {
		if _, err := ParseOpen(declared, 512); !errors.Is(err, ErrMessage) {
			t.Fatalf("a prefix of MaxPrefix tokens declared, none sent: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 16; per > 64<<10 {
		t.Errorf("an Open declaring %d tokens and sending none allocated %d bytes", MaxPrefix, per)
	}
	// good's largest token is 3: a vocabulary of 3 does not hold it.
	if _, err := ParseUpload(good, 3); !errors.Is(err, ErrMessage) {
		t.Errorf("token outside vocabulary: err = %v", err)
	}
	if _, err := ParseUpload(good, 4); err != nil {
		t.Errorf("the largest token of a vocabulary: err = %v", err)
	}
	// A payload of 2^64-1 bits, which (bits+7)/8 wraps to no bytes.
	huge := append(AppendUpload(nil, &Upload{Round: 1})[:6], 1, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	if u, err := ParseUpload(huge, 512); !errors.Is(err, ErrMessage) {
		t.Errorf("a draft of 2^64-1 bits and no payload: %+v, %v", u, err)
	}
}

func FuzzParseUpload(f *testing.F) {
	f.Add(AppendUpload(nil, &Upload{Round: 1, Committed: []int32{1, 2}, CommittedProb: []float32{1, 1}, Drafts: []Draft{{Token: 3, Bits: 9, Payload: []byte{1, 2}}}}))
	f.Add([]byte{})
	f.Add(AppendUpload(nil, &Upload{Round: 2, Drafts: []Draft{{Token: 3, Bits: 9, Payload: []byte{1, 2}}, {Token: 4}, {Token: 5}}, Parents: []int32{-1, -1, 1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ParseUpload(b, 1000)
		if err != nil {
			return
		}
		// compare encodings: float fields may hold NaN, which DeepEqual
		// never finds equal to itself
		enc := AppendUpload(nil, u)
		if back, err := ParseUpload(enc, 1000); err != nil || !bytes.Equal(AppendUpload(nil, back), enc) {
			t.Fatalf("re-encoding changed the message: %v", err)
		}
	})
}

func FuzzParseVerdict(f *testing.F) {
	f.Add(AppendVerdict(nil, &Verdict{Round: 1, Accepted: 2, Token: 5, CommittedTarget: []float32{0.5}}))
	f.Add(AppendVerdict(nil, &Verdict{Round: 1, Accepted: 2, Token: 5, Draft: 2}))
	f.Add(AppendVerdict(nil, &Verdict{Round: 1, Accepted: 2, Token: 5, Node: 4, HasNode: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVerdict(b, 1000)
		if err != nil {
			return
		}
		enc := AppendVerdict(nil, v)
		if back, err := ParseVerdict(enc, 1000); err != nil || !bytes.Equal(AppendVerdict(nil, back), enc) {
			t.Fatalf("re-encoding changed the message: %v", err)
		}
	})
}
