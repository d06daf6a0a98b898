// Preloaded with `node --require` (NODE_OPTIONS): adds
// `Authorization: Bearer $ORBIT_MCP_TOKEN` to every HTTP request the process
// makes, through fetch or undici alike. The MCP conformance suite has no
// option for a request header, and `orbit mcp --listen` needs the token.
'use strict';

const { Agent, setGlobalDispatcher } = require('undici');

const token = process.env.ORBIT_MCP_TOKEN;

function withAuthorization(headers, value) {
  if (headers == null) {
    return { authorization: value };
  }
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      return [...headers.filter(([name]) => String(name).toLowerCase() !== 'authorization'), ['authorization', value]];
    }
    const flat = [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() !== 'authorization') {
        flat.push(headers[i], headers[i + 1]);
      }
    }
    return [...flat, 'authorization', value];
  }
  if (typeof headers[Symbol.iterator] === 'function') {
    return withAuthorization([...headers], value);
  }
  const object = {};
  for (const [name, v] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'authorization') {
      object[name] = v;
    }
  }
  object.authorization = value;
  return object;
}

if (token) {
  const value = `Bearer ${token}`;
  setGlobalDispatcher(
    new Agent().compose((dispatch) => (options, handler) =>
      dispatch({ ...options, headers: withAuthorization(options.headers, value) }, handler),
    ),
  );
}
