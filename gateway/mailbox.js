// The gateway's mailbox: no message is lost while the bot is away or when it dies (issues 21, 33).
//
// A puppet service streams events to whoever is connected and keeps nothing. The mailbox listens
// to the puppet itself, always: every message from someone else (a DM or a room line) is kept,
// with its payload, in a small file (a JSON list in the session volume, rewritten atomically),
// until the bot says it has committed it, at most `max` of them (past that the oldest are
// dropped and the count logged). Each time a bot connects, the kept messages are emitted again,
// in order, and their payloads are served from the file (the puppet itself may have forgotten
// them, after a gateway restart). The bot applies a message id once, so a message handed over
// twice is harmless.
//
// Why an acknowledgement and not a replay of everything recent: only the bot knows when a
// message is committed (applied and marked handled, in its database). A message the bot had
// received and not committed when it died (a SIGKILL 50 ms after a burst) is kept, however long
// the bot stays down; one it committed is let go at once, so a reconnect replays only what is
// really in flight, and nothing depends on a guessed time. The acknowledgement rides on the gRPC
// connection the bot already has: a `ding` whose data is `wolfjudge:committed ID` (like the
// capabilities probe, capabilities.js), answered only when the mailbox has let the message go.
// A lost acknowledgement costs a replay the bot ignores. A message older than `keepMs` (a day:
// the bot drops older ones unread) is let go at the next replay.
//
// The bot client's event stream is seen through wechaty-puppet-service's EventStreamManager (its
// start, and the end of its streaming call); the module is imported by file, as the package
// exports only its entry point.

import fs from 'node:fs'
import path from 'node:path'

import { EventStreamManager } from './node_modules/wechaty-puppet-service/dist/esm/src/server/event-stream-manager.js'

const REPLAY_DELAY_MS = 500 // after the stream starts: the client has its login and ready events
export const COMMITTED = 'wolfjudge:committed' // the bot's acknowledgement: `${COMMITTED} ID`
const COMMITTED_MEMORY = 10000 // ids acknowledged, remembered against a payload read still under way

export class Mailbox {
  constructor (puppet, { file, max = 1000, keepMs = 24 * 60 * 60 * 1000, log = console }) {
    this.puppet = puppet
    this.file = file
    this.max = max
    this.keepMs = keepMs
    this.log = log
    this.items = this.load() // [{id, payload, keptAt}], not yet committed by the bot
    this.dropped = 0
    this.streams = 0
    this.byId = new Map(this.items.map(i => [i.id, i]))
    this.committed = new Set() // acknowledged ids (the newest COMMITTED_MEMORY)
    this.watchStreams()
    this.servePayloads()
    this.hearAcknowledgements()
    puppet.on('message', ({ messageId }) => this.arrived(messageId).catch(e =>
      this.log.error(`gateway: mailbox: message ${messageId}: ${e.message || e}`)))
  }

  get connected () {
    return this.streams > 0
  }

  load () {
    try {
      const items = JSON.parse(fs.readFileSync(this.file, 'utf8'))
      return Array.isArray(items) ? items : []
    } catch (e) {
      if (e.code !== 'ENOENT') this.log.error(`gateway: mailbox: ${this.file} unreadable: ${e.message}`)
      return []
    }
  }

  save () {
    const tmp = `${this.file}.tmp`
    fs.mkdirSync(path.dirname(this.file), { recursive: true })
    fs.writeFileSync(tmp, JSON.stringify(this.items))
    fs.renameSync(tmp, this.file)
  }

  async arrived (messageId) {
    if (this.byId.has(messageId) || this.committed.has(messageId)) return
    const payload = await this.puppet.messagePayload(messageId)
    if (!payload || payload.talkerId === this.puppet.currentUserId) return // the bot's own echo
    // (committed while its payload was read: the bot was quicker)
    if (this.byId.has(messageId) || this.committed.has(messageId)) return
    const item = { id: messageId, payload, keptAt: Date.now() }
    this.items.push(item)
    this.byId.set(messageId, item)
    while (this.items.length > this.max) {
      const old = this.items.shift()
      this.byId.delete(old.id)
      this.dropped++
      this.log.error(`gateway: mailbox full (${this.max}): dropped the oldest kept message, ${this.dropped} so far`)
    }
    this.save()
  }

  // The bot's acknowledgements: a committed message is let go (any other ding goes on).
  hearAcknowledgements () {
    const ding = this.puppet.ding.bind(this.puppet)
    this.puppet.ding = async data => {
      if (typeof data !== 'string' || !data.startsWith(`${COMMITTED} `)) return ding(data)
      this.letGo(data.slice(COMMITTED.length + 1).split(' ').filter(Boolean))
    }
  }

  letGo (ids) {
    for (const id of ids) {
      this.committed.add(id)
      if (this.committed.size > COMMITTED_MEMORY) {
        this.committed.delete(this.committed.values().next().value)
      }
    }
    const before = this.items.length
    this.items = this.items.filter(i => !this.committed.has(i.id))
    if (this.items.length === before) return
    for (const id of ids) this.byId.delete(id)
    this.save()
  }

  // The payloads of kept messages come from the mailbox (the puppet may not have them).
  servePayloads () {
    const original = this.puppet.messagePayload.bind(this.puppet)
    this.puppet.messagePayload = async id => {
      const kept = this.byId.get(id)
      return kept ? kept.payload : original(id)
    }
  }

  watchStreams () {
    const mailbox = this
    const start = EventStreamManager.prototype.start
    EventStreamManager.prototype.start = function (stream) {
      start.call(this, stream)
      mailbox.streams++
      let ended = false
      const end = () => {
        if (!ended) {
          ended = true
          mailbox.streams--
        }
      }
      for (const event of ['cancelled', 'error', 'finish', 'close']) stream.on(event, end)
      setTimeout(() => mailbox.replay(), REPLAY_DELAY_MS)
    }
  }

  // Everything not yet committed, to the connection that just started (the bot ignores what
  // it has already applied, and what it is still handling from an earlier connection).
  replay () {
    if (!this.connected) return
    const now = Date.now()
    const young = this.items.filter(i => now - i.keptAt < this.keepMs)
    if (young.length !== this.items.length) {
      this.items = young
      this.byId = new Map(this.items.map(i => [i.id, i]))
      this.save()
    }
    if (this.items.length) this.log.log(`gateway: mailbox: replaying ${this.items.length} kept messages`)
    for (const item of this.items) this.puppet.emit('message', { messageId: item.id })
  }
}
