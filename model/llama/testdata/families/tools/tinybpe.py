"""A tiny byte-level BPE vocabulary shared by every model in this directory.

The vocabulary is GPT-2's scheme in miniature: the 256 byte tokens (ids 0-255,
id = byte value, spelled with GPT-2's printable byte-to-unicode alphabet, so a
space is "Ġ" and a newline "Ċ"), then one token per merge in rank order, then
two control tokens. llama.cpp reads it as tokenizer.ggml.model "gpt2" with the
"gpt-2" pre-tokenizer; the Hugging Face directories get the same vocabulary as
vocab.json + merges.txt.

encode() is a plain reimplementation of the algorithm for ASCII text (split
words the way GPT-2's pattern does for letters, digits, punctuation and spaces,
then apply the lowest-ranked merge repeatedly inside each word); make.sh checks
its ids against llama.cpp's own tokenizer (llama-tokenize) on every prompt.
"""

import re


def byte_alphabet():
    """GPT-2's reversible byte -> printable character map (bytes_to_unicode)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = {}
    shift = 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + shift)
            shift += 1
    return chars


# Merges in rank order, written in the byte alphabet ("Ġ" is a space).
# Chosen so that the prompt below uses a good share of them.
MERGES = [
    ("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġ", "a"), ("o", "n"), ("r", "e"),
    ("e", "r"), ("Ġt", "he"), ("a", "n"), ("Ġ", "s"), ("Ġ", "w"), ("o", "u"),
    ("i", "s"), ("Ġ", "o"), ("e", "d"), ("i", "t"), ("a", "t"), ("Ġ", "m"),
    ("Ġ", "b"), ("Ġ", "l"), ("Ġ", "d"), ("Ġ", "c"), ("Ġ", "f"), ("Ġ", "p"),
    ("Ġ", "h"), ("o", "r"), ("e", "n"), ("a", "r"), ("l", "l"), ("in", "g"),
    ("Ġ", "u"), ("O", "n"), ("On", "c"), ("Onc", "e"),
    ("u", "p"), ("Ġu", "p"), ("Ġup", "on"), ("Ġt", "i"), ("Ġti", "m"),
    ("Ġtim", "e"), ("Ġw", "a"), ("Ġwa", "s"), ("Ġthe", "re"), ("Ġl", "it"),
    ("Ġlit", "t"), ("Ġlitt", "l"), ("Ġlittl", "e"), ("Ġm", "o"),
    ("Ġmo", "d"), ("Ġmod", "e"), ("Ġmode", "l"), ("Ġs", "m"), ("Ġsm", "a"),
    ("Ġsma", "ll"), ("Ġt", "o"),
]

BOS = "<|startoftext|>"
EOS = "<|endoftext|>"

# The prompt of every NAME_golden.bin: BOS, then this text's tokens.
PROMPT_TEXT = "Once upon a time, there was a little model that was small."

# Every golden's prompts, each BOS and the text's tokens: the first in
# NAME_golden.bin, the second in NAME_golden_p2.bin, the third in
# NAME_golden_p3.bin (golden_name). The second is as long as the smallest
# context allows (64 tokens: 64 + 64 greedy = 128, the context of gpt2,
# OPT, GPT-Neo and the golden harness) and mostly single bytes: digits,
# capitals, a newline, quotes; the third is BOS and two byte tokens. The
# digits, words and "Do" were picked from a few dozen tries so that every
# model's greedy path keeps a top-2 margin above 2.5e-4 of its logits' range
# (the first prompt's smallest is 2.8e-4): more than twice the 1e-4 of the
# range that model/llama's tests allow an engine, so that any engine within
# it must also reproduce the greedy ids.
# None may end in a newline (make.sh passes them through $(...)).
PROMPTS = [
    PROMPT_TEXT,
    'In 1640, the 89 rabbits said:\n"Hello, world!" and then they all went home; THE END.',
    "Do",
]


def golden_name(stem, prompt):
    """The golden file of prompt index prompt (0, 1, 2) for stem, e.g. "llama2_golden"."""
    return f"{stem}.bin" if prompt == 0 else f"{stem}_p{prompt + 1}.bin"


def vocabulary():
    """Returns (tokens, merges as "a b" strings, bos id, eos id)."""
    alphabet = byte_alphabet()
    tokens = [alphabet[b] for b in range(256)]
    seen = set(tokens)
    for a, b in MERGES:
        assert a in seen and b in seen, (a, b)
        t = a + b
        assert t not in seen, t
        tokens.append(t)
        seen.add(t)
    bos = len(tokens)
    tokens.append(BOS)
    eos = len(tokens)
    tokens.append(EOS)
    return tokens, [a + " " + b for a, b in MERGES], bos, eos


def encode(text):
    """Token ids of ASCII text, without BOS."""
    tokens, _, _, _ = vocabulary()
    ids = {t: i for i, t in enumerate(tokens)}
    rank = {m: r for r, m in enumerate(MERGES)}
    alphabet = byte_alphabet()
    out = []
    for word in re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+", text):
        parts = [alphabet[b] for b in word.encode("utf-8")]
        while len(parts) > 1:
            best = min(range(len(parts) - 1), key=lambda i: rank.get((parts[i], parts[i + 1]), 1 << 30))
            if (parts[best], parts[best + 1]) not in rank:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        out.extend(ids[p] for p in parts)
    return out


def prompt_ids(text=PROMPT_TEXT):
    """BOS and the tokens of text."""
    _, _, bos, _ = vocabulary()
    return [bos] + encode(text)


if __name__ == "__main__":
    toks, merges, bos, eos = vocabulary()
    print(len(toks), "tokens,", len(merges), "merges")
    for i, text in enumerate(PROMPTS):
        print(f"prompt {i + 1} ({golden_name('NAME_golden', i)}): {prompt_ids(text)}")
