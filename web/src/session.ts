// Who is signed in, for the pages that offer more to some roles (main.tsx provides it).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './types';

export const MeContext = createContext<Me | null>(null);

export function useMe(): Me | null {
  return useContext(MeContext);
}
