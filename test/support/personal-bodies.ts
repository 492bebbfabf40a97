// Bodies whose personal data sits where masking by field name never looked: free text (answers,
// strengths, concerns, alignment), an unknown kind's fields, a body over the console's 128 KiB,
// bodies that are not JSON. What no masked view of the console may ever show is in SECRETS.

/** The campaign and candidates these bodies are about. */
export const CAMPAIGN = 'cmp_masking_Qw7';
export const ZELPHINE = 'cand-masking-zelphine';
export const THESSALY = 'cand-masking-thessaly';

/** Every string that must never reach a masked view, with where it comes from. */
export const SECRETS: Record<string, string> = {
  Zelphine: 'first name, in fields and free text',
  Quarkwood: 'last name, in fields and free text',
  '06 55 41 27 98': 'phone spoken in an answer',
  '655412798': 'phone field',
  'zelphine.quarkwood': 'e-mail',
  Oriabel: 'unknown kind: name',
  Stanwick: 'unknown kind: name',
  '07 61 22 33 44': 'unknown kind: phone',
  'Rue des Tilleuls': 'unknown kind: address',
  Thessaly: 'body over 128 KiB: name',
  Vornhagen: 'body over 128 KiB: name',
  '06 12 98 76 54': 'body over 128 KiB: phone',
  Perrine: 'body that is not JSON: name',
  Galvadon: 'body that is not JSON: name',
  '06 44 55 66 77': 'body that is not JSON: phone',
  Ysolde: 'body over 128 KiB that is not JSON: name',
  Marcanthe: 'body over 128 KiB that is not JSON: name',
  '13 €/h': 'salary expectation',
};

/** The markers of SECRETS found in a text (none, in a masked view). */
export function leaked(text: string): string[] {
  return Object.keys(SECRETS).filter((secret) => text.includes(secret));
}

const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00.000Z`;

/** The candidate added, then interviewed: every free-text field names them. */
export const ZELPHINE_EVENTS = [
  {
    event: 'candidate.added',
    timestamp: at(1),
    data: {
      campaign_id: CAMPAIGN,
      candidate_id: ZELPHINE,
      first_name: 'Zelphine',
      last_name: 'Quarkwood',
      email: 'zelphine.quarkwood@exemple.fr',
      phone: '+33655412798',
      call_queued: true,
    },
  },
  {
    event: 'candidate.interview.completed.extended',
    timestamp: at(2),
    data: {
      campaign_id: CAMPAIGN,
      candidate_id: ZELPHINE,
      first_name: 'Zelphine',
      last_name: 'Quarkwood',
      email: 'zelphine.quarkwood@exemple.fr',
      phone: '+33655412798',
      interview_score: 7.5,
      availability: 'Disponible, rappeler Zelphine au 06 55 41 27 98',
      availability_start: '2026-12-01',
      salary_expectation: '13 €/h',
      candidate_alignment: 'Zelphine Quarkwood connaît bien le poste.',
      strengths: 'Mme Quarkwood est précise.',
      concerns: 'Zelphine habite loin du site.',
      responses: [
        {
          question: 'Pouvez-vous vous présenter ?',
          answer: 'Oui, je suis Zelphine Quarkwood, joignable au 06 55 41 27 98.',
          score: 8,
          explanation: 'Zelphine se présente clairement.',
        },
      ],
    },
  },
];

/** A known kind whose data does not validate (a dead letter): the name is where an enum goes. */
export const INVALID_EVENT = {
  event: 'candidate.interview.failed',
  timestamp: at(5),
  data: {
    campaign_id: CAMPAIGN,
    candidate_id: ZELPHINE,
    first_name: 'Zelphine',
    last_name: 'Quarkwood',
    failure_reason: 'Zelphine Quarkwood a raccroché',
  },
};

/** A kind this version does not know, with personal fields of its own. */
export const UNKNOWN_KIND_EVENT = {
  event: 'candidate.callback.requested',
  timestamp: at(3),
  data: {
    campaign_id: CAMPAIGN,
    candidate_id: 'cand-masking-oriabel',
    contact: { full_name: 'Oriabel Stanwick', mobile: '07 61 22 33 44', address: '12 Rue des Tilleuls' },
    note: 'Rappeler Oriabel Stanwick au 07 61 22 33 44',
    'Oriabel Stanwick': 'a key that is a name',
  },
};

/** An interview whose body is over 128 KiB: its answers name the candidate, again and again. */
export function largeEvent(): { event: string; timestamp: string; data: Record<string, unknown> } {
  const responses = Array.from({ length: 800 }, (_, i) => ({
    question: `Question ${i + 1} ?`,
    answer: `Réponse ${i + 1} : je m'appelle Thessaly Vornhagen, au 06 12 98 76 54, et je répète mon nom pour la ${i + 1}e fois.`,
    score: 5,
    explanation: `Thessaly Vornhagen répond (${i + 1}).`,
  }));
  const event = {
    event: 'candidate.interview.completed.extended',
    timestamp: at(4),
    data: {
      campaign_id: CAMPAIGN,
      candidate_id: THESSALY,
      first_name: 'Thessaly',
      last_name: 'Vornhagen',
      email: null,
      phone: null,
      interview_score: 5,
      availability: null,
      availability_start: null,
      salary_expectation: null,
      candidate_alignment: 'Thessaly convient.',
      strengths: null,
      concerns: null,
      responses,
    },
  };
  if (JSON.stringify(event).length <= 128 * 1024) throw new Error('the large body must be over 128 KiB');
  return event;
}

/** A body that is not JSON, and one over 128 KiB: dead letters, kept as received. */
// JSON.parse's message quotes the first characters: a reason must not show them either.
export const NOT_JSON = 'Perrine Galvadon, rappelez-moi au 06 44 55 66 77 {';
export const LARGE_NOT_JSON = `${'Ysolde Marcanthe a laissé un message. '.repeat(4000)} {`;
