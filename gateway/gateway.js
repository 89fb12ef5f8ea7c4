// The wolfjudge gateway (issue 21): a Wechaty puppet service that the bot (python-wechaty)
// connects to over plaintext gRPC, serving the puppet that logs in to WeChat.
//
//   node gateway.js [--grpc-port N] [--http-port M]
//   env: WECHATY_PUPPET_SERVICE_TOKEN   the token the bot presents (required)
//        GATEWAY_PUPPET                 the puppet: an npm package installed next to this file
//                                       (wechaty-puppet-wechat4u, a paid iPad-protocol puppet,
//                                       …); empty or `mock`: wechaty-puppet-mock with an HTTP
//                                       control API, for tests and dry runs (mock.js)
//        WECHATY_PUPPET_TOKEN           the puppet's own token, if it takes one
//        WECHATY_PUPPET_SESSION_DIR     where the login session and the mailbox are kept (a
//                                       volume: a restart needs no new scan, loses no message)
//        GATEWAY_HOST                   the gRPC address (127.0.0.1; 0.0.0.0 in the image)
//        GATEWAY_GRPC_PORT (8788), GATEWAY_HTTP_PORT (8789: the status page, status.js, and
//                                       the mock's control API)
//        GATEWAY_MAILBOX (file), GATEWAY_MAILBOX_MAX (1000): messages kept until the bot has
//                                       committed them (mailbox.js); next to it,
//                                       sent-keys.jsonl: the bot's recent sends (once.js)
//        GATEWAY_LOGIN_TIMEOUT (45): seconds a real puppet may take to start its login
//        GATEWAY_CONTACTS, GATEWAY_BOT_NAME: the mock's contacts and bot name;
//        GATEWAY_MOCK_WITHOUT: methods the mock pretends not to have (roomCreate, ...)
//
// A real puppet is started here, at once: its login QR code (or its login failure) is in the
// gateway's log before any bot connects. A puppet that cannot start (no network to WeChat, a
// bad token) is reported as a login failure, and tried again every minute; the gateway itself
// stays up.

import http from 'node:http'
import path from 'node:path'
import process from 'node:process'

import { WechatyBuilder } from 'wechaty'
import { PuppetServer } from 'wechaty-puppet-service'

import { answerCapabilities } from './capabilities.js'
import { Mailbox } from './mailbox.js'
import { SendOnce } from './once.js'
import { authorized, status } from './status.js'

function arg (name) {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

const grpcPort = Number(arg('grpc-port') || process.env.GATEWAY_GRPC_PORT || 8788)
const httpPort = Number(arg('http-port') || process.env.GATEWAY_HTTP_PORT || 8789)
const token = process.env.WECHATY_PUPPET_SERVICE_TOKEN
if (!token) {
  console.error('gateway: set WECHATY_PUPPET_SERVICE_TOKEN')
  process.exit(2)
}
const sessionDir = process.env.WECHATY_PUPPET_SESSION_DIR || '.'
const mailboxFile = process.env.GATEWAY_MAILBOX || path.join(sessionDir, 'mailbox.json')
const mailboxMax = Number(process.env.GATEWAY_MAILBOX_MAX || 1000)
const puppetName = process.env.GATEWAY_PUPPET || ''

if (!puppetName || puppetName === 'mock') {
  const { serveMock } = await import('./mock.js')
  await serveMock({ grpcPort, httpPort, token, mailboxFile, mailboxMax })
} else {
  await serveReal()
}

async function serveReal () {
  process.chdir(sessionDir) // Wechaty's memory card (the login session) is kept here
  const host = process.env.GATEWAY_HOST || '127.0.0.1'
  const loginTimeout = Number(process.env.GATEWAY_LOGIN_TIMEOUT || 45) * 1000
  let real
  try {
    real = WechatyBuilder.build({
      name: 'wolfjudge-gateway',
      puppet: puppetName,
      puppetOptions: process.env.WECHATY_PUPPET_TOKEN ? { token: process.env.WECHATY_PUPPET_TOKEN } : {},
    })
    await real.init()
  } catch (e) {
    console.error(`gateway: the puppet ${puppetName} cannot be loaded: ${e.message || e}` +
      ` (is it installed? npm install ${puppetName} next to gateway.js)`)
    process.exit(3)
  }
  const puppet = real.puppet

  // The bot stops and starts the puppet through gRPC each time it connects. A real puppet
  // must not follow: its stop logs WeChat out (a new QR scan after every bot restart). The
  // gateway alone starts and stops it.
  puppet.stop = async () => {
    console.log('gateway: a bot asked to stop the puppet: ignored (WeChat stays logged in)')
  }

  // The puppet's progress, in a few lines: a repeated error is logged once with its count.
  let seen = false // a QR code or a login since the last start
  let lastError = ''
  let repeats = 0
  real.on('scan', (qrcode, status) => {
    seen = true
    console.log(`gateway: scan (${status}) https://wechaty.js.org/qrcode/${encodeURIComponent(qrcode)}`)
  })
  real.on('login', user => {
    seen = true
    console.log(`gateway: logged in as ${user}`)
  })
  real.on('logout', user => console.log(`gateway: logged out: ${user}`))
  real.on('error', e => {
    const text = String(e && (e.message || e))
    if (text === lastError) {
      repeats++
      return
    }
    if (repeats) console.error(`gateway: (the error before repeated ${repeats} more times)`)
    lastError = text
    repeats = 0
    console.error(`gateway: puppet error: ${text}`)
  })
  const mailbox = new Mailbox(puppet, { file: mailboxFile, max: mailboxMax })
  new SendOnce(puppet, { file: path.join(path.dirname(mailboxFile), 'sent-keys.jsonl') })
  answerCapabilities(puppet, puppetName)
  const served = new PuppetServer({ endpoint: `${host}:${grpcPort}`, puppet, token, tls: { disable: true } })
  await served.start()
  // The status page only: a real puppet has no control API.
  const page = http.createServer((req, res) => {
    const ok = req.method === 'GET' && new URL(req.url, 'http://gateway').pathname === '/status'
    const code = !ok ? 404 : authorized(req, token) ? 200 : 401
    const body = code === 200 ? status({ puppet, puppetName, mailbox }) : { error: code === 404 ? 'not found' : 'token required' }
    res.writeHead(code, { 'content-type': 'application/json; charset=utf-8' })
    res.end(JSON.stringify(body))
  })
  await new Promise(resolve => page.listen(httpPort, host, resolve))
  console.log(`gateway ready grpc=${host}:${grpcPort} http=${host}:${httpPort} puppet=${puppetName}`)

  // Start the login now: a QR code (or a login from the saved session) within the timeout, or
  // a login failure that says why. A puppet that started keeps trying by itself (it is not
  // stopped: wechat4u's stop logs out and forgets the session), and the failure is told again
  // each minute until a QR code or a login comes; one that could not start is started again.
  let started = false
  const waitSeen = () => new Promise(resolve => {
    const check = setInterval(() => {
      if (seen) {
        clearInterval(check)
        resolve()
      }
    }, 200)
  })
  const tryLogin = async () => {
    if (puppet.isLoggedIn || seen) return
    let timer
    const timeout = new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), loginTimeout)
    })
    try {
      if (!started) {
        await Promise.race([puppet.start(), timeout])
        started = true
        console.log(`gateway: ${puppetName} started; waiting for a QR code or the login`)
      }
      await Promise.race([waitSeen(), timeout])
    } catch (e) {
      const reason = e && e.message === 'timeout'
        ? `no QR code and no login from WeChat within ${loginTimeout / 1000} s` +
          (lastError ? ` (last error: ${lastError})` : ' (no network to WeChat?)')
        : String(e && (e.message || e))
      console.error(`gateway: login failed: ${reason}; trying again in a minute`)
      setTimeout(tryLogin, 60 * 1000)
    } finally {
      clearTimeout(timer)
    }
  }
  tryLogin()
  const stop = async () => {
    page.close()
    try { await served.stop() } catch { /* stopping anyway */ }
    process.exit(0) // the puppet is not stopped: its session stays valid for the next start
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  await new Promise(() => {}) // serve until stopped
}
