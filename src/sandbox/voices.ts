// The voices an agency can choose: the service's default voices, and its own clones (only ready ones).
import type { DefaultVoice, Language, VoiceClone, VoicesResponse } from '../api/index.js';
import type { Agency } from './state.js';

export const DEFAULT_VOICES: readonly DefaultVoice[] = [
  { agent_id: 'agent_fr_camille', voice_name: 'Camille', language: 'fr', description: 'Voix féminine, posée et chaleureuse' },
  { agent_id: 'agent_fr_thomas', voice_name: 'Thomas', language: 'fr', description: 'Voix masculine, claire et dynamique' },
  { agent_id: 'agent_en_emma', voice_name: 'Emma', language: 'en', description: 'Female voice, calm and friendly' },
  { agent_id: 'agent_en_james', voice_name: 'James', language: 'en', description: 'Male voice, clear and upbeat' },
  { agent_id: 'agent_es_lucia', voice_name: 'Lucía', language: 'es', description: 'Voz femenina, cercana' },
  { agent_id: 'agent_es_mateo', voice_name: 'Mateo', language: 'es', description: 'Voz masculina, enérgica' },
];

interface Clone extends VoiceClone {
  status: 'ready' | 'training';
}

/** Each agency has one ready clone and one still training (unlisted and unusable). */
function clonesOf(agency: Agency): Clone[] {
  const clone = (n: number, status: Clone['status']): Clone => ({
    voice_id: `vc_${agency.id}_${n}`,
    voice_clone_name: `${agency.name} voice ${n}`,
    language: 'fr',
    preview_audio_url: `https://voices.sandbox.example/vc_${agency.id}_${n}.mp3`,
    status,
  });
  return [clone(1, 'ready'), clone(2, 'training')];
}

export function voicesResponse(agency: Agency): VoicesResponse {
  return {
    default_voices: [...DEFAULT_VOICES],
    voice_clones: clonesOf(agency)
      .filter((c) => c.status === 'ready')
      .map(({ status: _status, ...clone }) => clone),
  };
}

export function defaultVoiceFor(language: Language): string {
  return DEFAULT_VOICES.find((v) => v.language === language)!.agent_id;
}

/** A voice the agency may use as `override_agent_id`, or undefined (rule 8: not found or not its own). */
export function resolveVoice(agency: Agency, id: string): { override_agent_id: string; is_voice_clone: boolean } | undefined {
  if (DEFAULT_VOICES.some((v) => v.agent_id === id)) return { override_agent_id: id, is_voice_clone: false };
  if (clonesOf(agency).some((c) => c.voice_id === id && c.status === 'ready')) return { override_agent_id: id, is_voice_clone: true };
  return undefined;
}
