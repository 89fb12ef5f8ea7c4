// The gateway's mailbox: no message is lost while the bot is away (issue 21).
//
// A puppet service streams events to whoever is connected and keeps nothing. The mailbox listens
// to the puppet itself, always: a message (a DM or a room line) that arrives while no bot client
// holds the event stream is kept, with its payload, in a small file (a JSON list in the session
// volume, rewritten atomically), at most `max` of them (past that the oldest are dropped and the
// count logged). When a bot connects, the kept messages are emitted again, in order, and their
// payloads are served from the file (the puppet itself may have forgotten them, after a gateway
// restart). A replayed message stays a while (`keepMs`) and is replayed again to the next
// connection too: the bot applies a message id once, so a bot that dies in the middle of a
// replay loses nothing.
//
// The bot client's event stream is seen through wechaty-puppet-service's EventStreamManager (its
// start, and the end of its streaming call); the module is imported by file, as the package
// exports only its entry point.

import fs from 'node:fs'
import path from 'node:path'

import { EventStreamManager } from './node_modules/wechaty-puppet-service/dist/esm/src/server/event-stream-manager.js'

const REPLAY_DELAY_MS = 500 // after the stream starts: the client has its login and ready events

export class Mailbox {
  constructor (puppet, { file, max = 1000, keepMs = 10 * 60 * 1000, log = console }) {
    this.puppet = puppet
    this.file = file
    this.max = max
    this.keepMs = keepMs
    this.log = log
    this.items = this.load() // [{id, payload, keptAt, replayedAt?}]
    this.dropped = 0
    this.streams = 0
    this.byId = new Map(this.items.map(i => [i.id, i]))
    this.watchStreams()
    this.servePayloads()
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
    if (this.connected || this.byId.has(messageId)) return
    const payload = await this.puppet.messagePayload(messageId)
    if (!payload || payload.talkerId === this.puppet.currentUserId) return // the bot's own echo
    if (this.connected) return // the bot connected meanwhile: the stream has it
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

  replay () {
    if (!this.connected) return
    const now = Date.now()
    this.items = this.items.filter(i => !i.replayedAt || now - i.replayedAt < this.keepMs)
    this.byId = new Map(this.items.map(i => [i.id, i]))
    if (this.items.length) this.log.log(`gateway: mailbox: replaying ${this.items.length} kept messages`)
    for (const item of this.items) {
      item.replayedAt = item.replayedAt || now
      this.puppet.emit('message', { messageId: item.id })
    }
    this.save()
  }
}
