// gen_hf_golden.js regenerates hf_golden.json: token ids from the reference
// Hugging Face tokenizers library (its Rust core through the Node binding)
// for the TinyStories-656K tokenizer.json in shared/, and for a variant of it
// with byte-fallback tokens added, so that the tests pin this package to the
// library on more than the eight shared golden strings.
//
//	cd tokenizer/testdata
//	npm install --no-save tokenizers@0.23.2
//	node gen_hf_golden.js ../../../shared/models/tinystories-656k/tokenizer.json > hf_golden.json
//
// The variant ("bytes") appends <0x00>..<0xFF> to the vocabulary at ids
// 2048.., except <0x40> ('@') and <0xF0> (the lead byte of 4-byte UTF-8, so
// emoji stay unknown while é and 日 fall back to bytes); byteFallbackVariant
// in hf_golden_test.go builds the same file.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');

const texts = [
  '', ' ', '  ', 'a', 'Hello', ' leading', 'trailing ', 'multiple   spaces',
  'Once upon a time, there was a little girl named Lily.\nShe loved to play outside.',
  '\n\n', 'tab\there', 'crlf\r\nline', "Lily's \"toy\" car!", 'x\u00a0y',
  'é', '日本語', '🙂', '🙂é', 'é🙂', '🙂🙂é', '@é@', 'a@@b', '@@', '👨‍👩‍👧',
  'naïve café — “quotes”', 'Ω≈ç√∫', 'ALL CAPS TEXT', '12345 67890',
  'One day, Tim went to the park. He saw a big red ball. "Can I play?" he asked.',
  'The end.▁literal U+2581▁',
];

(async () => {
  const base = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const variant = JSON.parse(JSON.stringify(base));
  let next = Object.keys(variant.model.vocab).length;
  for (let b = 0; b < 256; b++) {
    if (b === 0x40 || b === 0xf0) continue;
    variant.model.vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = next++;
  }
  const out = [];
  for (const [name, json] of [['tinystories', base], ['bytes', variant]]) {
    const tok = Tokenizer.fromString(JSON.stringify(json));
    for (const text of texts) {
      const enc = await tok.encode(text, null, { addSpecialTokens: true });
      out.push({ tokenizer: name, text, ids: enc.getIds() });
    }
  }
  process.stdout.write('[\n' + out.map((c) => JSON.stringify(c)).join(',\n') + '\n]\n');
})();
