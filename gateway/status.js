// The gateway's status page (issue 21): what `wolfjudge doctor` reads, without opening a gRPC
// event stream of its own (a second client's stop call would end the bot's stream).
//
//   GET /status   with the header `Authorization: Bearer WECHATY_PUPPET_SERVICE_TOKEN`
//   → {"wolfjudge": 1, "puppet": NAME, "loggedIn": bool, "botConnected": bool,
//      "kept": N, "capabilities": {...}}   (capabilities.js; kept: the messages the bot
//      has not committed yet, mailbox.js)
//
// Read only: nothing here changes the puppet or the mailbox.

import { capabilities } from './capabilities.js'

export function status ({ puppet, puppetName, mailbox, without = [] }) {
  return {
    wolfjudge: 1,
    puppet: puppetName,
    loggedIn: Boolean(puppet.isLoggedIn),
    botConnected: mailbox.connected,
    kept: mailbox.items.length,
    capabilities: capabilities(puppet, puppetName, without),
  }
}

export function authorized (req, token) {
  return req.headers.authorization === `Bearer ${token}`
}
