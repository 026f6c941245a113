import { createContext, useContext } from 'react';
import type { Screen } from './lib/nav';

/** Moving between screens, optionally with an intent (e.g. open the "add provider" form). */
export type Intent = 'add-provider' | 'show-rejections' | null;
export type Navigate = (screen: Screen, intent?: Intent) => void;

export const NavigationContext = createContext<{ navigate: Navigate; intent: Intent; clearIntent: () => void }>({
  navigate: () => undefined,
  intent: null,
  clearIntent: () => undefined,
});

export const useNavigate = (): Navigate => useContext(NavigationContext).navigate;
export const useIntent = () => {
  const { intent, clearIntent } = useContext(NavigationContext);
  return [intent, clearIntent] as const;
};
