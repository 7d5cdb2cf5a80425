/**
 * Words that people use for the same thing when they ask for a tool, written once for the
 * verbs and nouns of tool catalogs (not for any one catalog): a request for "fetch the open
 * tickets" should find a tool described as "list issues". A request's term also looks for the
 * other words of its groups, at a lower weight than the word itself (index.ts).
 */
import { stem } from './stem.js';

const GROUPS = [
  // Verbs of reading.
  'get fetch retrieve obtain read load show display view see lookup look find check query pull',
  'list enumerate browse show all index catalog',
  'search find lookup look query seek discover locate explore',
  'describe explain detail details info information about summary overview',
  'count number how many total tally',
  'download fetch save grab export',
  'upload send put push publish post share submit',
  // Verbs of writing.
  'create make new add generate build start open compose draft write produce',
  'update edit change modify set alter patch rename adjust',
  'delete remove erase destroy drop clear purge discard unlink trash',
  'close end finish stop cancel terminate kill abort halt',
  'run execute launch invoke trigger call perform start',
  'send email mail message notify post deliver',
  'convert transform translate transcode turn change format',
  'compare diff difference versus vs contrast',
  'analyze analyse analysis inspect examine evaluate assess audit review check',
  'calculate compute calculator math arithmetic solve evaluate',
  'schedule plan book reserve reservation appointment calendar meeting event',
  'buy purchase order shop shopping store cart checkout',
  'sell sale list market',
  'pay payment invoice bill billing charge',
  'track monitor watch follow observe',
  'recommend suggest recommendation suggestion advice idea ideas',
  'summarize summarise summary condense tldr digest abstract',
  'translate translation language languages',
  'merge combine join concatenate',
  'sort order rank arrange',
  'filter narrow restrict select',
  'validate verify check lint test confirm',
  'copy duplicate clone',
  'move rename relocate transfer',
  'install setup add deploy',
  'login signin sign authenticate auth authentication',
  'resize scale shrink crop',
  'compress zip archive pack',
  'extract unzip unpack decompress parse',
  'record log capture',
  'fix repair correct resolve',
  'learn study teach tutor lesson course education',
  'pause stop halt',
  'refund reimburse reimbursement chargeback',
  'remember memorize memory recall knowledge',
  'forget delete remove',
  'speak speech voice aloud say tts',
  'transcribe transcript transcription subtitles captions dictate',
  'alert alerts warning warnings notification notifications alarm',
  'draw paint illustrate picture image',
  'reply respond answer comment',
  'approve approval accept review',
  'schema columns column structure fields layout',
  // Nouns of catalogs.
  'file files document documents doc docs',
  'folder directory dir path',
  'repository repo repositories repos project codebase',
  'issue issues ticket tickets bug bugs task tasks',
  'pull merge request pr prs',
  'commit commits change changes revision',
  'branch branches',
  'message messages chat text sms conversation',
  'email emails mail inbox gmail',
  'user users account accounts person people profile member',
  'contact contacts address phone',
  'image images picture pictures photo photos img png jpeg jpg',
  'video videos movie movies film films clip',
  'music song songs track tracks audio playlist album',
  'weather forecast temperature rain climate',
  'news headlines article articles',
  'price prices cost costs quote',
  'stock stocks share shares equity ticker market',
  'crypto cryptocurrency bitcoin coin coins token ethereum',
  'money currency exchange rate',
  'job jobs career careers employment hiring work vacancy',
  'recipe recipes cooking cook meal meals food dish',
  'restaurant restaurants dining eat',
  'hotel hotels accommodation lodging stay',
  'flight flights airline airlines plane fly',
  'travel trip trips vacation holiday tour',
  'map maps location locations place places address geocode directions route',
  'time date clock timezone',
  'table tables database db sql rows',
  'web website page pages url site link',
  'browser browse navigate click screenshot',
  'note notes memo',
  'secret secrets password credential credentials key keys',
  'container containers docker pod pods',
  'cluster kubernetes k8s',
  'server servers host hosts instance instances machine vm',
  'log logs logging',
  'metric metrics stats statistics',
  'error errors exception exceptions crash failure',
  'payment payments transaction transactions',
  'customer customers client clients',
  'product products item items',
  'book books reading literature',
  'game games gaming play',
  'health medical medicine doctor symptom symptoms',
  'fitness workout exercise gym',
  'law legal lawyer',
  'car cars vehicle vehicles auto',
  'house home property real estate rent apartment',
  'word words dictionary definition define meaning',
  'joke jokes funny humor',
  'quiz trivia question questions',
  'pdf pdfs',
  'spreadsheet spreadsheets sheet sheets excel csv',
  'diagram chart charts graph plot visualize visualization',
];

/** Each stemmed term with the other stemmed terms of its groups. */
let related: Map<string, string[]> | undefined;

/** The terms that mean about what `term` (a stemmed term) means, itself left out. */
export function synonymsOf(term: string): readonly string[] {
  related ??= buildSynonyms();
  return related.get(term) ?? [];
}

function buildSynonyms(): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  for (const group of GROUPS) {
    const stems = [...new Set(group.split(' ').map(stem))];
    for (const one of stems) {
      let set = sets.get(one);
      if (!set) sets.set(one, (set = new Set()));
      for (const other of stems) if (other !== one) set.add(other);
    }
  }
  return new Map([...sets].map(([key, set]) => [key, [...set]]));
}
