package wire

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestTreeGolden pins the bytes of token-tree messages next to the other
// optional fields: a tree upload as a session sends it (diagnostics on, the
// default: flags 1|4) and its verdict (flags 2|8), then every optional
// field at once (upload flags 7, verdict flags 15; a session never sends
// these combinations, but the format allows them and the order of the
// fields is the format's).
func TestTreeGolden(t *testing.T) {
	// The tree: node 0 (token 10) and node 1 (token 11) are candidates at
	// the context, node 2 (token 12) a candidate after node 0. Node 0 is
	// the context's first child and carries its distribution (3 bits),
	// node 2 node 0's (2 bits); node 1 carries none.
	drafts := []Draft{{Token: 10, Bits: 3, Payload: []byte{0xe0}}, {Token: 11}, {Token: 12, Bits: 2, Payload: []byte{0x40}}}
	session := &Upload{Round: 9, Committed: []int32{4}, CommittedProb: []float32{0.5}, Drafts: drafts, Parents: []int32{-1, -1, 0}}
	// round 9 | flags 5 | 1 committed: 04 | 0.5 | 3 drafts: 0a 03 e0, 0b 00, 0c 02 40 | parents+1: 0 0 1
	sessionHex := "09000000" + "05" + "01" + "04" + "0000003f" + "03" + "0a03e0" + "0b00" + "0c0240" + "00" + "00" + "01"
	all := &Upload{Round: 9, Committed: []int32{4}, CommittedProb: []float32{0.5}, Drafts: drafts,
		Check: 0x1122334455667788, HasCheck: true, Parents: []int32{-1, -1, 0}}
	// … | drafts | check | parents+1: the tree comes after the check
	allHex := "09000000" + "07" + "01" + "04" + "0000003f" + "03" + "0a03e0" + "0b00" + "0c0240" + "8877665544332211" + "00" + "00" + "01"
	checkGolden(t, "session upload", session, sessionHex, AppendUpload, ParseUpload)
	checkGolden(t, "every field upload", all, allHex, AppendUpload, ParseUpload)

	// The answer to session: node 0 then node 2 accepted (node 2 + 1 = 3,
	// depth 2), a leaf, so the token is the bonus token (not resampled).
	answer := &Verdict{Round: 9, Accepted: 2, Token: 300, CommittedTarget: []float32{0.25}, Node: 3, HasNode: true}
	// round 9 | flags a | accepted 2 | token ac 02 | 1 diag: 0.25 | node+1 03
	answerHex := "09000000" + "0a" + "02" + "ac02" + "01" + "0000803e" + "03"
	every := &Verdict{Round: 9, Accepted: 2, Token: 300, Resampled: true, Draft: 2, CommittedTarget: []float32{0.25}, Node: 3, HasNode: true}
	// … | token | draft 02 | diag | node: the node comes last
	everyHex := "09000000" + "0f" + "02" + "ac02" + "02" + "01" + "0000803e" + "03"
	// A tree whose walk accepted nothing still names the node: 0.
	none := &Verdict{Round: 9, Token: 7, Resampled: true, HasNode: true}
	noneHex := "09000000" + "09" + "00" + "07" + "00"
	checkGolden(t, "session verdict", answer, answerHex, AppendVerdict, ParseVerdict)
	checkGolden(t, "every field verdict", every, everyHex, AppendVerdict, ParseVerdict)
	checkGolden(t, "no node accepted verdict", none, noneHex, AppendVerdict, ParseVerdict)
}

// checkGolden: m encodes to the bytes of want (hex) and parses back to
// itself (vocabulary 512).
func checkGolden[M any](t *testing.T, name string, m M, want string, appendTo func([]byte, M) []byte, parse func([]byte, int) (M, error)) {
	t.Helper()
	b := appendTo(nil, m)
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("%s bytes\n got %s\nwant %s", name, got, want)
		return
	}
	if back, err := parse(b, 512); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("%s round trip: %+v, %v", name, back, err)
	}
}

// TestTreeLimits: a tree holds 1 to MaxTreeNodes (256) nodes and a verdict
// names a node + 1 of at most MaxTreeNodes; parent + 1 and node + 1 above
// 127 take two varint bytes.
func TestTreeLimits(t *testing.T) {
	if MaxTreeNodes != 256 {
		t.Fatalf("MaxTreeNodes = %d; docs/protocol.md says 256", MaxTreeNodes)
	}
	chain := func(n int) *Upload {
		u := &Upload{Round: 1, Committed: []int32{}}
		for i := range n {
			u.Drafts = append(u.Drafts, Draft{Token: int32(i % 2), Bits: 1, Payload: []byte{0x80}})
			u.Parents = append(u.Parents, int32(i)-1)
		}
		return u
	}
	// A chain of 256 nodes: node i's parent + 1 is i, written as LEB128
	// by hand (one byte below 128, then low 7 bits | 0x80 and 01).
	var tail strings.Builder
	for i := range MaxTreeNodes {
		if i < 128 {
			fmt.Fprintf(&tail, "%02x", i)
		} else {
			fmt.Fprintf(&tail, "%02x01", i)
		}
	}
	u := chain(MaxTreeNodes)
	b := AppendUpload(nil, u)
	if got := hex.EncodeToString(b); !strings.HasSuffix(got, tail.String()) || !strings.HasPrefix(got, "01000000"+"04"+"00"+"8002") {
		t.Fatalf("256-node upload bytes: %s…%s", got[:20], got[len(got)-20:])
	}
	if back, err := ParseUpload(b, 2); err != nil || !reflect.DeepEqual(back, u) {
		t.Fatalf("256-node tree: %v", err)
	}
	if _, err := ParseUpload(AppendUpload(nil, chain(MaxTreeNodes+1)), 2); !errors.Is(err, ErrMessage) {
		t.Errorf("257-node tree: err = %v", err)
	}

	v := &Verdict{Round: 1, Accepted: 256, Token: 1, Node: MaxTreeNodes, HasNode: true}
	vb := AppendVerdict(nil, v)
	if got, want := hex.EncodeToString(vb), "01000000"+"08"+"8002"+"01"+"8002"; got != want {
		t.Fatalf("verdict bytes\n got %s\nwant %s", got, want)
	}
	if back, err := ParseVerdict(vb, 2); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("verdict naming node %d: %+v, %v", MaxTreeNodes, back, err)
	}
	over, _ := hex.DecodeString("01000000" + "08" + "01" + "01" + "8102")
	if _, err := ParseVerdict(over, 2); !errors.Is(err, ErrMessage) {
		t.Errorf("verdict naming node 257: err = %v", err)
	}
}
