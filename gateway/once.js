// Each message of the bot's outbox is shown once, across the bot's restarts (issue 33).
//
// The bot marks an outbox row sent after the puppet took it; a bot killed between the two sends
// the row again when it restarts. Before each send it tells the gateway which row it is: a
// `ding` whose data is `wolfjudge:sending {"key": …, "to": …, "sha": …}` (the row's dedupe key,
// the conversation, the SHA-256 of the text). The next messageSendText to that conversation
// with that text is recorded under the key (a line appended to a small file in the session
// volume; the newest `max` kept), and a send whose key is recorded already is not made again:
// the earlier message's id is answered, and the bot marks the row sent. A send without a
// matching announcement goes as it always did. The newest announcement replaces an older one
// (a send that failed after its announcement leaves nothing behind for the next row).

import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const SENDING = 'wolfjudge:sending'

export class SendOnce {
  constructor (puppet, { file, max = 1000, log = console }) {
    this.puppet = puppet
    this.file = file
    this.max = max
    this.log = log
    this.sent = this.load() // key -> the message id it was sent as
    this.lines = this.sent.size
    this.next = null // the announced send: {key, to, sha}
    this.wrap()
  }

  load () {
    const sent = new Map()
    let text = ''
    try {
      text = fs.readFileSync(this.file, 'utf8')
    } catch (e) {
      if (e.code !== 'ENOENT') this.log.error(`gateway: ${this.file} unreadable: ${e.message}`)
    }
    for (const line of text.split('\n')) {
      try {
        const { key, id } = JSON.parse(line)
        if (typeof key === 'string') sent.set(key, id)
      } catch { /* an empty line, or one cut by a crash: that send was not recorded */ }
    }
    while (sent.size > this.max) sent.delete(sent.keys().next().value)
    return sent
  }

  record (key, id) {
    this.sent.delete(key)
    this.sent.set(key, id)
    fs.mkdirSync(path.dirname(this.file), { recursive: true })
    fs.appendFileSync(this.file, JSON.stringify({ key, id }) + '\n')
    this.lines++
    if (this.sent.size > this.max) this.sent.delete(this.sent.keys().next().value)
    if (this.lines > 2 * this.max) { // compact: the newest `max`, rewritten atomically
      const tmp = `${this.file}.tmp`
      fs.writeFileSync(tmp, [...this.sent].map(([k, i]) => JSON.stringify({ key: k, id: i }) + '\n').join(''))
      fs.renameSync(tmp, this.file)
      this.lines = this.sent.size
    }
  }

  wrap () {
    const ding = this.puppet.ding.bind(this.puppet)
    this.puppet.ding = async data => {
      if (typeof data !== 'string' || !data.startsWith(`${SENDING} `)) return ding(data)
      try {
        const { key, to, sha } = JSON.parse(data.slice(SENDING.length + 1))
        this.next = typeof key === 'string' ? { key, to, sha } : null
      } catch {
        this.next = null
      }
    }
    const original = this.puppet.messageSendText
    const send = original.bind(this.puppet)
    this.puppet.messageSendText = async (conversationId, text, ...rest) => {
      const next = this.next
      this.next = null
      if (!next || next.to !== conversationId ||
          next.sha !== crypto.createHash('sha256').update(String(text), 'utf8').digest('hex')) {
        return send(conversationId, text, ...rest)
      }
      if (this.sent.has(next.key)) {
        this.log.log(`gateway: ${next.key} was sent before: not sent again`)
        return this.sent.get(next.key)
      }
      const id = await send(conversationId, text, ...rest)
      this.record(next.key, id ?? null)
      return id
    }
    this.puppet.messageSendText.original = original // what capabilities.js reads
  }
}
