// The HBM verdict line of a plan's memory: the words and how alarming they look. A step that fits
// only through XLA's rematerialization (memory.remat_pressure) reads as such, with the floor it
// can come down to, not as a plain "fits" next to a figure above capacity.
import { gib } from './format';
import type { Plan } from './types';

export type MemoryVerdictTone = 'good' | 'warn' | 'bad';

export function memoryVerdict(memory: NonNullable<Plan['memory']>): { text: string; tone: MemoryVerdictTone } {
  const verdict = memory.verdict ?? (memory.fits ? 'fits' : 'does_not_fit');
  if (verdict === 'fits' && memory.remat_pressure) {
    const floor = memory.remat_floor;
    return {
      text: floor ? `fits through rematerialization: floor ${gib(floor.gib)}, slower steps` : 'fits through rematerialization, slower steps',
      tone: 'warn',
    };
  }
  return {
    text: verdict.replace(/_/g, ' '),
    tone: verdict === 'fits' ? 'good' : verdict === 'uncertain' ? 'warn' : 'bad',
  };
}
