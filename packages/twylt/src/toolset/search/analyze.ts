/**
 * Text to search terms, one rule for the tools and for the requests: identifiers split
 * (`list_pull_requests`, `listPullRequests`, `list-pull-requests` and `ListPRs` all give
 * list, pull, requests), lower case, accents and stop words dropped, words stemmed.
 */
import { stem } from './stem.js';

/**
 * Words that say nothing about which tool is meant: English function words, the politeness
 * and question words of requests, and the words every tool description uses.
 */
const STOP_WORDS = new Set(
  (
    'a about above after again all also am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing done down during each either etc few for from further had has have having he her here hers him his how i if in into ' +
    'is it its itself just let me might more most must my myself no nor not now of off on once only or other our ours out over own per ' +
    'please same she should so some such than that the their theirs them then there these they this those through to too under until up ' +
    'us very via was we were what when where which while who whom why will with would you your yours want wants need needs like ' +
    "don doesn didn isn aren won tell kindly hey hi hello help thanks thank could someone something anything way using use uses used " +
    'given give gives tool tools optional default defaults value values returns return returned result results input output string ' +
    'number integer boolean object array parameter parameters argument arguments e.g eg ie named called titled'
  ).split(/\s+/),
);

/** Split an identifier at case changes and digits: `listPRsByID2` gives list, PRs, By, ID, 2. */
const CASE_BOUNDARY = /([a-z0-9])([A-Z])|([A-Z]+)([A-Z][a-z])|([a-zA-Z])([0-9])|([0-9])([a-zA-Z])/g;

/** ASCII words: a run of capitals (an acronym), a word that may start with one, or digits. */
const ASCII_WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/** The words of `text` before stop words and stemming, lower case, identifiers split. */
export function words(text: string): string[] {
  // Most catalogs are ASCII: one regular expression splits snake_case, kebab-case, dotted.names,
  // paths/like/this and camelCase at once.
  if (/^[\x00-\x7f]*$/.test(text)) {
    const found = text.match(ASCII_WORD);
    return found ? found.map((word) => word.toLowerCase()) : [];
  }
  const out: string[] = [];
  // Accents off (café, cafe), then anything that is not a letter or digit separates words.
  const plain = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  for (const chunk of plain.split(/[^\p{L}\p{N}]+/u)) {
    if (chunk === '') continue;
    const split = chunk.replace(CASE_BOUNDARY, (_, a, b, c, d, e, f, g, h) => (a ? `${a} ${b}` : c ? `${c} ${d}` : e ? `${e} ${f}` : `${g} ${h}`));
    for (const part of split.split(' ')) if (part !== '') out.push(part.toLowerCase());
  }
  return out;
}

/** A word as it is indexed and looked up: stemmed; undefined for a stop word. */
export function term(word: string): string | undefined {
  if (STOP_WORDS.has(word) || word.length === 1) return undefined;
  return stem(word);
}

/** The search terms of `text`, in order, repeats kept (term frequencies count them). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    const t = term(word);
    if (t !== undefined) out.push(t);
  }
  return out;
}

/**
 * An identifier also as one word (`airquality` beside air, quality), so a request that
 * writes it joined or split finds it either way.
 */
export function joinedIdentifier(name: string): string | undefined {
  const parts = words(name);
  return parts.length > 1 ? parts.join('') : undefined;
}
