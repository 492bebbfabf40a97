// The dictionaries stored bodies are deflated with, by codec number (src/store/bodies.ts). Each is
// the shapes of the service's events and nothing of anyone's (scripts/body-dictionary.mjs printed
// the first from fixtures/events: keys, kinds, enumerated values, the prefixes of ids and phones).
// A dictionary once shipped never changes, or the rows deflated with it could no longer be read:
// a better one is added under the next number, beside this one.
export const BODY_DICTIONARIES: Readonly<Record<number, Buffer>> = {
  1: Buffer.from(
    '"status":"active","status":"paused","status":"completed","status":"pending","status":"voicemail","st' +
      'atus":"incomplete","failure_reason":"voicemail","failure_reason":"no_answer","failure_reason":"user_' +
      'hangup","failure_reason":"technical_error","contract_type":"CDI","contract_type":"CDD","contract_typ' +
      'e":"Intérim","contract_type":"Alternance","contract_type":"Stage","timestamp":"2026-01-01T00:00:00.0' +
      '00Z",{"event":"credits.low","timestamp":"","data":{"credits_remaining":0,"threshold":0}}{"event":"cr' +
      'edits.depleted","timestamp":"","data":{"credits_remaining":0,"last_campaign_id":"cmp_"}}{"event":"ca' +
      'mpaign.status_changed","timestamp":"","data":{"campaign_id":"cmp_","job_title":"","old_status":"acti' +
      've","new_status":"paused"}}{"event":"campaign.created","timestamp":"","data":{"campaign_id":"cmp_","' +
      'job_title":"","contract_type":"CDD","candidate_link":"https://","questions_count":0,"status":"active' +
      '"}}{"event":"candidate.interview.failed","timestamp":"","data":{"campaign_id":"cmp_","candidate_id":' +
      '"","first_name":"","last_name":"","failure_reason":"user_hangup"}}{"event":"candidate.interview.comp' +
      'leted.extended","timestamp":"","data":{"campaign_id":"cmp_","candidate_id":"","first_name":"","last_' +
      'name":"","email":"","phone":"+33","interview_score":0,"availability":"","availability_start":"","sal' +
      'ary_expectation":"","candidate_alignment":"","strengths":"","concerns":"","responses":[{"question":"' +
      '","answer":"","score":0,"explanation":""}]}}{"event":"candidate.interview.completed","timestamp":"",' +
      '"data":{"campaign_id":"cmp_","candidate_id":"","first_name":"","last_name":"","email":"","phone":"+3' +
      '3","interview_score":0,"availability":"","availability_start":"","salary_expectation":"","candidate_' +
      'alignment":"","strengths":"","concerns":""}}{"event":"candidate.sourced","timestamp":"","data":{"cam' +
      'paign_id":"cmp_","candidate_id":"","first_name":"","last_name":"","phone":"+33","sms_sent":true}}{"e' +
      'vent":"candidate.interview.started","timestamp":"","data":{"campaign_id":"cmp_","candidate_id":"","f' +
      'irst_name":"","last_name":""}}{"event":"candidate.added","timestamp":"","data":{"campaign_id":"cmp_"' +
      ',"candidate_id":"","first_name":"","last_name":"","email":"","phone":"+33","call_queued":true}}',
    'utf8',
  ),
};
