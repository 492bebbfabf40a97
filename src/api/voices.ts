import { z } from 'zod';

/**
 * A default service voice (docs/sandbox.md, "What the document leaves open": voices); its
 * `agent_id` is usable as `override_agent_id`.
 */
const defaultVoiceSchema = z.object({
  agent_id: z.string(),
  voice_name: z.string(),
  language: z.string(),
  description: z.string(),
});
/** An agency's voice clone, listed only when ready; its `voice_id` is usable as `override_agent_id`. */
const voiceCloneSchema = z.object({
  voice_id: z.string(),
  voice_clone_name: z.string(),
  language: z.string(),
  preview_audio_url: z.url(),
});
/** 200 answer of `GET /voices`. */
export const voicesResponseSchema = z.object({
  default_voices: z.array(defaultVoiceSchema),
  voice_clones: z.array(voiceCloneSchema),
});
export type DefaultVoice = z.infer<typeof defaultVoiceSchema>;
export type VoiceClone = z.infer<typeof voiceCloneSchema>;
/** The answer of `listVoices`. */
export type VoicesResponse = z.infer<typeof voicesResponseSchema>;
