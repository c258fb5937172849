// Regenerates numbers.golden: node canon/testdata/gen_numbers.js > canon/testdata/numbers.golden
// Each line is "format <16 hex digits of the double's bits> <JSON.stringify output>"
// or "parse <JSON number text> <16 hex digits of JSON.parse's double>".
// A fixed-seed generator makes the file reproducible.
let seed = 0x9e3779b9;
function rand32() {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}
const buf = new DataView(new ArrayBuffer(8));
function bitsOf(x) {
  buf.setFloat64(0, x);
  return buf.getUint32(0).toString(16).padStart(8, "0") + buf.getUint32(4).toString(16).padStart(8, "0");
}
function fromBits(hi, lo) {
  buf.setUint32(0, hi);
  buf.setUint32(4, lo);
  return buf.getFloat64(0);
}
const out = [];
function fmt(x) {
  if (!Number.isFinite(x)) return;
  out.push("format " + bitsOf(x) + " " + JSON.stringify(x));
}
// Hand-picked edges.
[0, -0, 1, -1, 0.1, 0.2, 0.30000000000000004, 1e21, 1e-7, 1.5e-7, 0.000001, 1e-6, 123e-20,
 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 2 ** 64,
 1.2345678901234568e20, 999999999999999900000, 1e20, 1e22, 123456789, 0.5, 100, 1e100, 1.7e-300,
 9007199254740991, -9007199254740991, 4.35, 0.1 + 0.7, 1 / 3, 2 / 3, Math.PI, Math.E].forEach(fmt);
for (let e = -330; e <= 310; e++) {
  fmt(Number("1e" + e));
  fmt(Number("1.5e" + e));
  fmt(Number("123456789e" + e));
}
for (let i = 0; i < 3000; i++) fmt(fromBits(rand32(), rand32())); // any bits
for (let i = 0; i < 1000; i++) fmt((rand32() * 4294967296 + rand32()) / 10 ** (rand32() % 25)); // decimals
for (let i = 0; i < 1000; i++) fmt(rand32() / 2 ** (rand32() % 40)); // dyadic fractions
for (let i = 0; i < 500; i++) fmt(fromBits(0x43300000 + (rand32() % 0x900000), rand32())); // integers 2^52..2^75
// Parsing: long digit strings round as JSON.parse rounds them.
function parse(text) {
  out.push("parse " + text + " " + bitsOf(JSON.parse(text)));
}
["9007199254740993", "9007199254740995", "-9007199254740993", "123456789012345678901234567890",
 "1e-400", "-1e-400", "2.4703282292062328e-324", "2.4703282292062327e-324", "1.7976931348623158e308",
 "0.1000000000000000055511151231257827", "0.10000000000000001", "1E5", "1e+5", "-0.0e-0"].forEach(parse);
for (let i = 0; i < 1000; i++) {
  let digits = String(1 + (rand32() % 9));
  const n = 15 + (rand32() % 15);
  while (digits.length < n) digits += String(rand32() % 10);
  const dot = rand32() % n;
  let text = dot === 0 ? digits : digits.slice(0, dot) + "." + digits.slice(dot);
  if (rand32() % 2) text += "e" + ((rand32() % 600) - 300);
  if (rand32() % 2) text = "-" + text;
  parse(text);
}
console.log(out.join("\n"));
