package uregex

import (
	"sync"
	"unicode"
)

// A kind is what uregex knows of a code point at run time: its Unicode
// general category, with the control characters that are White_Space
// (U+0009..U+000D, U+0085) split off so that \s is a union of kinds. Every
// code point has exactly one kind, so any set built from categories is a
// bit mask over kinds.
type kind uint8

const (
	kCn kind = iota // unassigned (and anything no table lists)
	kLu
	kLl
	kLt
	kLm
	kLo
	kMn
	kMc
	kMe
	kNd
	kNl
	kNo
	kPc
	kPd
	kPs
	kPe
	kPi
	kPf
	kPo
	kSm
	kSc
	kSk
	kSo
	kZs
	kZl
	kZp
	kCc
	kCcSpace // Cc and White_Space: U+0009..U+000D, U+0085
	kCf
	kCs
	kCo
	numKinds
)

// kindTables are Go's tables of the kinds (Go's unicode.Version).
var kindTables = [numKinds]*unicode.RangeTable{
	kLu: unicode.Lu, kLl: unicode.Ll, kLt: unicode.Lt, kLm: unicode.Lm, kLo: unicode.Lo,
	kMn: unicode.Mn, kMc: unicode.Mc, kMe: unicode.Me,
	kNd: unicode.Nd, kNl: unicode.Nl, kNo: unicode.No,
	kPc: unicode.Pc, kPd: unicode.Pd, kPs: unicode.Ps, kPe: unicode.Pe,
	kPi: unicode.Pi, kPf: unicode.Pf, kPo: unicode.Po,
	kSm: unicode.Sm, kSc: unicode.Sc, kSk: unicode.Sk, kSo: unicode.So,
	kZs: unicode.Zs, kZl: unicode.Zl, kZp: unicode.Zp,
	kCc: unicode.Cc, kCf: unicode.Cf, kCs: unicode.Cs, kCo: unicode.Co,
}

// categoryKinds maps a general category, by its short name, to its kinds.
var categoryKinds = map[string]uint32{
	"Lu": 1 << kLu, "Ll": 1 << kLl, "Lt": 1 << kLt, "Lm": 1 << kLm, "Lo": 1 << kLo,
	"LC": 1<<kLu | 1<<kLl | 1<<kLt,
	"L":  1<<kLu | 1<<kLl | 1<<kLt | 1<<kLm | 1<<kLo,
	"Mn": 1 << kMn, "Mc": 1 << kMc, "Me": 1 << kMe,
	"M":  1<<kMn | 1<<kMc | 1<<kMe,
	"Nd": 1 << kNd, "Nl": 1 << kNl, "No": 1 << kNo,
	"N":  1<<kNd | 1<<kNl | 1<<kNo,
	"Pc": 1 << kPc, "Pd": 1 << kPd, "Ps": 1 << kPs, "Pe": 1 << kPe,
	"Pi": 1 << kPi, "Pf": 1 << kPf, "Po": 1 << kPo,
	"P":  1<<kPc | 1<<kPd | 1<<kPs | 1<<kPe | 1<<kPi | 1<<kPf | 1<<kPo,
	"Sm": 1 << kSm, "Sc": 1 << kSc, "Sk": 1 << kSk, "So": 1 << kSo,
	"S":  1<<kSm | 1<<kSc | 1<<kSk | 1<<kSo,
	"Zs": 1 << kZs, "Zl": 1 << kZl, "Zp": 1 << kZp,
	"Z":  1<<kZs | 1<<kZl | 1<<kZp,
	"Cc": 1<<kCc | 1<<kCcSpace, "Cf": 1 << kCf, "Cs": 1 << kCs, "Co": 1 << kCo,
	"Cn": 1 << kCn,
	"C":  1<<kCc | 1<<kCcSpace | 1<<kCf | 1<<kCs | 1<<kCo | 1<<kCn,
}

// categoryLongNames are the long property-value aliases of the general
// categories (PropertyValueAliases.txt), as Oniguruma accepts them.
var categoryLongNames = map[string]string{
	"letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll",
	"titlecaseletter": "Lt", "modifierletter": "Lm", "otherletter": "Lo",
	"mark": "M", "combiningmark": "M", "nonspacingmark": "Mn", "spacingmark": "Mc", "enclosingmark": "Me",
	"number": "N", "decimalnumber": "Nd", "letternumber": "Nl", "othernumber": "No",
	"punctuation": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd",
	"openpunctuation": "Ps", "closepunctuation": "Pe", "initialpunctuation": "Pi",
	"finalpunctuation": "Pf", "otherpunctuation": "Po",
	"symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc", "modifiersymbol": "Sk", "othersymbol": "So",
	"separator": "Z", "spaceseparator": "Zs", "lineseparator": "Zl", "paragraphseparator": "Zp",
	"other": "C", "control": "Cc", "format": "Cf", "surrogate": "Cs", "privateuse": "Co", "unassigned": "Cn",
}

// The kind of every code point, in two stages: kindBlock[r>>8] is the
// index of a 256-entry block of kindData holding the kinds of r&0xFF.
// kindSets[k] is the set of code points of kind k, for compiling classes.
var (
	kindOnce  sync.Once
	kindBlock [(unicode.MaxRune + 1) >> 8]uint16
	kindData  []kind
	kindSets  [numKinds]runeSet
	kindSizes [numKinds]int // non-ASCII code points of each kind
)

func initKinds() {
	kindOnce.Do(func() {
		all := make([]kind, unicode.MaxRune+1)
		for k, t := range kindTables {
			if t == nil {
				continue
			}
			for _, r16 := range t.R16 {
				for r := rune(r16.Lo); r <= rune(r16.Hi); r += rune(r16.Stride) {
					all[r] = kind(k)
				}
			}
			for _, r32 := range t.R32 {
				for r := rune(r32.Lo); r <= rune(r32.Hi); r += rune(r32.Stride) {
					all[r] = kind(k)
				}
			}
		}
		for _, r := range []rune{0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85} {
			all[r] = kCcSpace
		}
		seen := map[string]uint16{}
		for b := range kindBlock {
			blk := all[b<<8 : (b+1)<<8]
			key := string(kindBytes(blk))
			i, ok := seen[key]
			if !ok {
				i = uint16(len(kindData) >> 8)
				seen[key] = i
				kindData = append(kindData, blk...)
			}
			kindBlock[b] = i
		}
		start := 0
		for r := 1; r <= len(all); r++ {
			if r == len(all) || all[r] != all[start] {
				k := all[start]
				kindSets[k] = append(kindSets[k], rng{rune(start), rune(r - 1)})
				start = r
			}
		}
		for k := range kindSets {
			kindSizes[k] = intersectSize(kindSets[k], runeSet{{0x80, unicode.MaxRune}})
		}
	})
}

func kindBytes(ks []kind) []byte {
	b := make([]byte, len(ks))
	for i, k := range ks {
		b[i] = byte(k)
	}
	return b
}

// kindOf is the kind of r, which must be a valid code point (as
// utf8.DecodeRuneInString returns; an invalid byte decodes as U+FFFD).
func kindOf(r rune) kind {
	return kindData[int(kindBlock[r>>8])<<8|int(r&0xFF)]
}
