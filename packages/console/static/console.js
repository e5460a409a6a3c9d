// The console's live updates. The server renders every page; this script only follows /events
// (server-sent events fed by lifeguard's events exchange) and, when an event arrives or the refresh
// interval passes, asks the server for the current page's <main> again and puts it in place.
// Nothing here builds markup: the server's HTML is already escaped.
(() => {
  const main = () => document.getElementById('main');
  const live = () => document.getElementById('live');
  const refreshSeconds = Number(document.body.dataset.refreshSeconds) || 5;
  let pending = null;
  let feedConnected = false;

  const setLive = (state, text) => {
    const element = live();
    if (!element) return;
    element.dataset.state = state;
    element.textContent = text;
  };

  const refresh = async () => {
    pending = null;
    // Never replace a form the operator is typing into.
    if (document.activeElement?.closest('form')) return;
    try {
      const response = await fetch(location.href, { headers: { 'x-lifeguard-fragment': 'main' } });
      if (!response.ok && response.status !== 404) return;
      const text = await response.text();
      const parsed = new DOMParser().parseFromString(text, 'text/html');
      const next = parsed.getElementById('main');
      const current = main();
      if (next && current) current.replaceWith(document.adoptNode(next));
      document.body.dataset.updatedAt = new Date().toISOString();
    } catch {
      setLive('down', 'console unreachable');
    }
  };

  const soon = () => {
    if (pending === null) pending = setTimeout(refresh, 300);
  };

  const events = new EventSource('/events');
  events.addEventListener('open', () => setLive('connecting', 'connected, waiting for the event feed'));
  events.addEventListener('feed', (message) => {
    feedConnected = JSON.parse(message.data).connected === true;
    setLive(
      feedConnected ? 'live' : 'polling',
      feedConnected ? 'live' : `RabbitMQ not followed: re-reading every ${refreshSeconds} s`,
    );
  });
  events.addEventListener('lifeguard', (message) => {
    const notice = JSON.parse(message.data);
    document.body.dataset.lastEvent = notice.type;
    soon();
  });
  events.addEventListener('error', () =>
    setLive('down', `live updates interrupted: re-reading every ${refreshSeconds} s`),
  );
  setInterval(soon, refreshSeconds * 1000);
})();
