/**
 * Why a page that has been reconnecting for long cannot get back in: asked of the server over
 * HTTP, since a refused WebSocket says nothing. An Orbit restarted on the same port (`orbit
 * open` takes its last port again) refuses this tab's login (401: the tab signed in to the Orbit
 * before it), or no longer serves the workspace (404). `null` when the server cannot be reached
 * at all (stopped, or still starting) or answers as it should: the usual words stay.
 */
export async function offlineReason(workspaceId: string): Promise<string | null> {
  let status: number;
  try {
    // The service worker's script: behind the login like the page, and small.
    const response = await fetch(`/w/${encodeURIComponent(workspaceId)}/sw.js`, { method: 'HEAD', credentials: 'same-origin', cache: 'no-store' });
    status = response.status;
  } catch {
    return null;
  }
  if (status === 401) return 'Orbit was restarted, and this tab was signed in to the Orbit before it: run `orbit open` in the workspace’s folder again and use the tab it opens.';
  if (status === 404) return 'Orbit runs again, but not this workspace: run `orbit open` in its folder.';
  return null;
}
