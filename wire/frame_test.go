package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"io"
	"reflect"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestFrameGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, FrameHello, AppendHello(nil, &Hello{Version: 1, Token: "ab"})); err != nil {
		t.Fatal(err)
	}
	// length 10 (type + 9-byte body) | type 1 | "HLMP" | version 1 | token "ab"
	want := "0a000000" + "01" + "484c4d50" + "0100" + "02" + "6162"
	if got := hex.EncodeToString(buf.Bytes()); got != want {
		t.Fatalf("frame\n got %s\nwant %s", got, want)
	}
	typ, body, err := ReadFrame(&buf, DefaultMaxFrame)
	if err != nil || typ != FrameHello {
		t.Fatal(typ, err)
	}
	h, err := ParseHello(body)
	if err != nil || h.Token != "ab" || h.Version != 1 {
		t.Fatalf("%+v %v", h, err)
	}
}

func TestControlRoundTrips(t *testing.T) {
	for _, o := range []*Open{
		{Resume: 9, Round: 3, Params: "hlm-session/1\nmethod=hlm", SLM: "s", Tokenizer: "t", Prefix: []int32{1, 2, 400}},
		{Resume: 9, Params: "hlm-session/1\nmethod=hlm", Keep: 300, KeepHash: 1 << 63, Prefix: []int32{7}},
		{Resume: 9, Keep: 1, Prefix: []int32{}},
	} {
		back, err := ParseOpen(AppendOpen(nil, o), 512)
		if err != nil || !reflect.DeepEqual(back, o) {
			t.Fatalf("open: %+v %v", back, err)
		}
	}
	// Tokens kept of no session are refused, and more than MaxPrefix.
	if o, err := ParseOpen(AppendOpen(nil, &Open{Keep: 3, Prefix: []int32{1}}), 512); !errors.Is(err, ErrMessage) {
		t.Errorf("keep without resume: %+v, %v", o, err)
	}
	if o, err := ParseOpen(AppendOpen(nil, &Open{Resume: 9, Keep: MaxPrefix + 1, Prefix: []int32{1}}), 512); !errors.Is(err, ErrMessage) {
		t.Errorf("keep beyond MaxPrefix: %+v, %v", o, err)
	}
	od := &Opened{Session: 1 << 40, Round: 2, Vocab: 512, Context: 512, LLM: "fp"}
	if b, err := ParseOpened(AppendOpened(nil, od)); err != nil || !reflect.DeepEqual(b, od) {
		t.Fatalf("opened: %+v %v", b, err)
	}
	w := &Welcome{Version: 3, MaxFrame: 99, Server: "hlm", Vocab: 32000, Context: 4096, LLM: "fp", Origin: "or"}
	if b, err := ParseWelcome(AppendWelcome(nil, w)); err != nil || !reflect.DeepEqual(b, w) {
		t.Fatalf("welcome: %+v %v", b, err)
	}
	e := &Error{Code: ErrCodeAuth, Message: "no"}
	if b, err := ParseError(AppendError(nil, e)); err != nil || !reflect.DeepEqual(b, e) {
		t.Fatalf("error: %+v %v", b, err)
	}
	// Welcome hex golden: version 3 | max frame 99 | "s" | vocab 512 | context 256 | "x" | "o"
	if got := hex.EncodeToString(AppendWelcome(nil, &Welcome{Version: 3, MaxFrame: 99, Server: "s", Vocab: 512, Context: 256, LLM: "x", Origin: "o"})); got != "0300"+"63000000"+"0173"+"00020000"+"00010000"+"0178"+"016f" {
		t.Errorf("welcome bytes %s", got)
	}
	// Open hex golden: resume 0 | round 0 | params | slm | tokenizer | llm | keep 0 | prefix [1, 300]
	if got := hex.EncodeToString(AppendOpen(nil, &Open{Params: "hlm-session/1\nseed=1", SLM: "s", Prefix: []int32{1, 300}})); got != "0000000000000000"+"00000000"+"14"+hex.EncodeToString([]byte("hlm-session/1\nseed=1"))+"0173"+"00"+"00"+"00"+"02"+"01"+"ac02" {
		t.Errorf("open bytes %s", got)
	}
	// A continuation: resume 7 | round 0 | "p" | "" | "" | "" | keep 200 | hash | prefix [5]
	if got := hex.EncodeToString(AppendOpen(nil, &Open{Resume: 7, Params: "p", Keep: 200, KeepHash: 0x0102030405060708, Prefix: []int32{5}})); got != "0700000000000000"+"00000000"+"0170"+"00"+"00"+"00"+"c801"+"0807060504030201"+"01"+"05" {
		t.Errorf("continuing open bytes %s", got)
	}
	// Opened hex golden: session 2 | round 1 | vocab 512 | context 256 | "x"
	if got := hex.EncodeToString(AppendOpened(nil, &Opened{Session: 2, Round: 1, Vocab: 512, Context: 256, LLM: "x"})); got != "0200000000000000"+"01000000"+"00020000"+"00010000"+"0178" {
		t.Errorf("opened bytes %s", got)
	}
}

func TestReadFrameLimits(t *testing.T) {
	for _, in := range []string{"HTTP/1.1 400 Bad Request\r\n\r\n", "HTTP/1.0 200 OK\r\n"} {
		if _, _, err := ReadFrame(bytes.NewReader([]byte(in)), DefaultMaxFrame); !errors.Is(err, ErrHTTP) || !errors.Is(err, ErrFrame) {
			t.Errorf("%q: %v; want ErrHTTP (an ErrFrame)", in, err)
		}
	}
	big := AppendFrame(nil, FrameUpload, make([]byte, 100))
	if _, _, err := ReadFrame(bytes.NewReader(big), 50); !errors.Is(err, ErrFrame) {
		t.Errorf("oversized: %v", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 5}), DefaultMaxFrame); !errors.Is(err, ErrFrame) {
		t.Errorf("huge length: %v", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader([]byte{1, 0, 0, 0, 99}), DefaultMaxFrame); !errors.Is(err, ErrFrameType) || !errors.Is(err, ErrFrame) {
		t.Errorf("unknown type: %v; want ErrFrameType (an ErrFrame)", err)
	}
	for _, in := range []string{"GET / HTTP/1.1\r\n", "POST /v1/completions HTTP/1.1\r\n", "HEAD / HTTP/1.0\r\n"} {
		if _, _, err := ReadFrame(bytes.NewReader([]byte(in)), DefaultMaxFrame); !errors.Is(err, ErrHTTPRequest) || !errors.Is(err, ErrFrame) {
			t.Errorf("%q: %v; want ErrHTTPRequest (an ErrFrame)", in, err)
		}
	}
	if _, _, err := ReadFrame(bytes.NewReader(big[:20]), DefaultMaxFrame); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 0, byte(FrameHello), 1, 2, 3}), DefaultMaxFrame); !errors.Is(err, ErrFrame) {
		t.Errorf("zero length (no type byte): %v", err)
	}
	// A Hello of the right length whose magic is not HLMP.
	bad := AppendHello(nil, &Hello{Version: ProtocolVersion, Token: "t"})
	bad[3] = 'X'
	if _, err := ParseHello(bad); !errors.Is(err, ErrMessage) {
		t.Errorf("bad magic: %v", err)
	}
}

// TestReadFrameGrowsWithData: a frame's memory follows the bytes that
// arrive, not the length its header declares (it was allocated whole
// before reading: 4 MiB for a header and a few bytes), and a body that
// does arrive in pieces is read whole.
func TestReadFrameGrowsWithData(t *testing.T) {
	head := []byte{0, 0, 0x40, 0, byte(FrameUpload)} // 4 MiB declared
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 16 {
		if _, _, err := ReadFrame(io.MultiReader(bytes.NewReader(head), bytes.NewReader(make([]byte, 100))), DefaultMaxFrame); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 16; per > 256<<10 {
		t.Errorf("a 4 MiB header with 100 bytes of body allocated %d bytes", per)
	}
	body := make([]byte, 1<<20+12345)
	for i := range body {
		body[i] = byte(i * 7)
	}
	typ, got, err := ReadFrame(iotest.OneByteReader(bytes.NewReader(AppendFrame(nil, FrameUpload, body))), DefaultMaxFrame)
	if err != nil || typ != FrameUpload || !bytes.Equal(got, body) {
		t.Errorf("a body read in pieces: %v %v, %d bytes, equal %v", typ, err, len(got), bytes.Equal(got, body))
	}
}

func FuzzControl(f *testing.F) {
	f.Add(byte(FrameOpen), AppendOpen(nil, &Open{Params: "{}", Prefix: []int32{1, 2}}))
	f.Add(byte(FrameOpen), AppendOpen(nil, &Open{Resume: 3, Keep: 9, KeepHash: 5, Prefix: []int32{1, 2}}))
	f.Add(byte(FrameHello), AppendHello(nil, &Hello{Version: 1, Token: "t"}))
	f.Add(byte(FrameOpened), AppendOpened(nil, &Opened{Session: 1}))
	f.Fuzz(func(t *testing.T, typ byte, b []byte) {
		switch FrameType(typ % 9) {
		case FrameHello:
			ParseHello(b)
		case FrameWelcome:
			ParseWelcome(b)
		case FrameOpen:
			if o, err := ParseOpen(b, 1000); err == nil {
				if back, err := ParseOpen(AppendOpen(nil, o), 1000); err != nil || !reflect.DeepEqual(back, o) {
					t.Fatal("open re-encoding changed it")
				}
			}
		case FrameOpened:
			ParseOpened(b)
		case FrameError:
			ParseError(b)
		}
		ReadFrame(bytes.NewReader(b), 1<<16)
	})
}

// TestMaxHelloOpen: the largest legal Hello and Open bodies (strings of
// MaxString bytes, a prefix of a whole context of the largest token ids)
// fit the limits a server reads them with, and one byte more does not; a
// string of MaxString+1 bytes is refused.
func TestMaxHelloOpen(t *testing.T) {
	long := string(bytes.Repeat([]byte{'x'}, MaxString))
	h := AppendHello(nil, &Hello{Version: ProtocolVersion, Token: long})
	if len(h) > MaxHello {
		t.Errorf("the largest Hello is %d bytes, MaxHello %d", len(h), MaxHello)
	}
	if _, err := ParseHello(AppendHello(nil, &Hello{Version: ProtocolVersion, Token: long + "x"})); !errors.Is(err, ErrMessage) {
		t.Errorf("a token of MaxString+1 bytes: %v", err)
	}
	const ctx = 4096
	prefix := make([]int32, ctx)
	for i := range prefix {
		prefix[i] = 1<<22 - 1 // the largest id of the largest vocabulary
	}
	o := AppendOpen(nil, &Open{Resume: ^uint64(0), Round: ^uint32(0), Params: long, SLM: long, Tokenizer: long, LLM: long, Keep: MaxPrefix, KeepHash: ^uint64(0), Prefix: prefix})
	if len(o) > MaxOpen(ctx) {
		t.Errorf("the largest Open is %d bytes, MaxOpen %d", len(o), MaxOpen(ctx))
	}
	frame := AppendFrame(nil, FrameOpen, make([]byte, MaxOpen(ctx)+1))
	if _, _, err := ReadFrame(bytes.NewReader(frame), MaxOpen(ctx)); !errors.Is(err, ErrFrame) {
		t.Errorf("an Open one byte beyond MaxOpen: %v", err)
	}
}

// FuzzReadFrame: any bytes give a frame within the limit whose body is the
// length its header declares and the bytes that follow it, or an error;
// never a panic (TestReadFrameGrowsWithData checks the memory).
func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, FrameHello, AppendHello(nil, &Hello{Version: ProtocolVersion, Token: "t"})))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0, 0, 0x40, 0, byte(FrameUpload), 1, 2, 3})
	f.Add([]byte{1, 0, 0, 0, 99})
	f.Fuzz(func(t *testing.T, in []byte) {
		typ, body, err := ReadFrame(bytes.NewReader(in), 1<<16)
		if err != nil {
			return
		}
		n := int(in[0]) | int(in[1])<<8 | int(in[2])<<16 | int(in[3])<<24
		if len(body) != n-1 || n-1 > 1<<16 || typ != FrameType(in[4]) || !bytes.Equal(body, in[FrameHeader:FrameHeader+len(body)]) {
			t.Fatalf("%x: type %v, %d body bytes", in[:FrameHeader], typ, len(body))
		}
	})
}

// TestHashTokens checks the hash against the standard library's FNV-1a of
// the same bytes, and that order and every token count.
func TestHashTokens(t *testing.T) {
	ids := []int{1, 300, 151935, 0}
	h := fnv.New64a()
	for _, id := range ids {
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
	}
	if got, want := HashTokens(ids), h.Sum64(); got != want {
		t.Errorf("HashTokens = %#x, FNV-1a of the bytes %#x", got, want)
	}
	seen := map[uint64][]int{}
	for _, v := range [][]int{nil, {0}, {1}, {1, 300}, {300, 1}, {1, 300, 151935}, {1, 301, 151935, 0}, ids} {
		k := HashTokens(v)
		if prev, ok := seen[k]; ok {
			t.Errorf("%v and %v hash alike", prev, v)
		}
		seen[k] = v
	}
}
