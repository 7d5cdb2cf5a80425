/**
 * The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), written from
 * the paper: "searching", "searches" and "searched" all become "search", so a request and a
 * description meet whatever the word's ending. Input: a lower-case word of ASCII letters.
 */

const cache = new Map<string, string>();
const CACHE_LIMIT = 50_000;

export function stem(word: string): string {
  let stemmed = cache.get(word);
  if (stemmed === undefined) {
    stemmed = word.length <= 2 || !/^[a-z]+$/.test(word) ? word : porter(word);
    if (cache.size < CACHE_LIMIT) cache.set(word, stemmed);
  }
  return stemmed;
}

/** Whether letter `i` of `w` is a consonant ("y" is one after a vowel or at the start). */
function consonant(w: string, i: number): boolean {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 || !consonant(w, i - 1);
  return true;
}

/** m of the paper: the number of vowel-consonant sequences in `w` ([C](VC)^m[V]). */
function measure(w: string): number {
  let m = 0;
  let i = 0;
  const n = w.length;
  while (i < n && consonant(w, i)) i++;
  while (i < n) {
    while (i < n && !consonant(w, i)) i++;
    if (i >= n) break;
    while (i < n && consonant(w, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(w: string): boolean {
  for (let i = 0; i < w.length; i++) if (!consonant(w, i)) return true;
  return false;
}

function doubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && consonant(w, n - 1);
}

/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
function cvc(w: string): boolean {
  const n = w.length;
  if (n < 3 || !consonant(w, n - 1) || consonant(w, n - 2) || !consonant(w, n - 3)) return false;
  const last = w[n - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

/** Replace suffix `from` by `to` when the stem before it has a measure above `min`. */
function replace(w: string, pairs: ReadonlyArray<readonly [string, string]>, min: number): string {
  for (const [from, to] of pairs) {
    if (w.endsWith(from)) {
      const base = w.slice(0, -from.length);
      return measure(base) > min ? base + to : w;
    }
  }
  return w;
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function porter(word: string): string {
  let w = word;
  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (!w.endsWith('ss') && w.endsWith('s')) w = w.slice(0, -1);
  // Step 1b: -ed, -ing.
  let cleanup = false;
  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    cleanup = true;
  } else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) {
    w = w.slice(0, -3);
    cleanup = true;
  }
  if (cleanup) {
    if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
    else if (doubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w) === 1 && cvc(w)) w += 'e';
  }
  // Step 1c: y to i.
  if (w.endsWith('y') && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  w = replace(w, STEP2, 0);
  w = replace(w, STEP3, 0);
  // Step 4: drop a suffix when the stem has measure above 1.
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const base = w.slice(0, -suffix.length);
    if (measure(base) > 1 && (suffix !== 'ion' || /[st]$/.test(base))) w = base;
    break;
  }
  // Step 5: a final e, a final ll.
  if (w.endsWith('e')) {
    const base = w.slice(0, -1);
    const m = measure(base);
    if (m > 1 || (m === 1 && !cvc(base))) w = base;
  }
  if (measure(w) > 1 && doubleConsonant(w) && w.endsWith('l')) w = w.slice(0, -1);
  return w;
}
