// What the puppet can do, told to the bot when it asks (issue 21).
//
// The puppet-service protocol has no call for it, so the bot sends a `ding` with the data
// `wolfjudge:capabilities` and the gateway answers with a `dong` whose data is a JSON object:
// which of the calls the bot needs the puppet implements. A method the puppet lacks, or one
// whose body only throws wechaty-puppet's "unsupported" error, is off; so is one listed in
// KNOWN_STUBS (implemented in name only). Any other ding is the puppet's own.

export const PROBE = 'wolfjudge:capabilities'

const NEEDS = {
  sendDm: 'messageSendText',
  createRooms: 'roomCreate',
  addMembers: 'roomAdd',
  removeMembers: 'roomDel',
  listMembers: 'roomMemberList',
}

// Puppets whose method exists but does nothing useful.
const KNOWN_STUBS = {
  'wechaty-puppet-xp': ['roomCreate'],
}

export function capabilities (puppet, name, without = []) {
  const stubs = new Set([...(KNOWN_STUBS[name] || []), ...without])
  const report = { wolfjudge: 1, puppet: name }
  for (const [need, method] of Object.entries(NEEDS)) {
    const fn = puppet[method] && (puppet[method].original || puppet[method]) // (once.js wraps)
    report[need] = typeof fn === 'function' && !stubs.has(method) &&
      !String(fn).slice(0, 400).includes('throwUnsupportedError')
  }
  return report
}

export function answerCapabilities (puppet, name, without = []) {
  const ding = puppet.ding.bind(puppet)
  puppet.ding = data => {
    if (data !== PROBE) return ding(data)
    puppet.emit('dong', { data: JSON.stringify(capabilities(puppet, name, without)) })
  }
}
