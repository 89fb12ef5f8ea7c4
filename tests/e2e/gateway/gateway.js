// The real-protocol test gateway (issue 9): a Wechaty puppet service on loopback whose WeChat is
// wechaty-puppet-mock, plus an HTTP control API for tests.
//
//   node gateway.js [--grpc-port N] [--http-port M]
//   env: WECHATY_PUPPET_SERVICE_TOKEN (required), GATEWAY_GRPC_PORT, GATEWAY_HTTP_PORT,
//        GATEWAY_BOT_NAME (the mock bot user's name), WECHATY_LOG (verbose, silly, ...),
//        GATEWAY_CONTACTS (JSON [{id, name}]: contacts made before the gRPC server listens, so
//        that a gateway restarted under a running bot knows them as WeChat would),
//        GATEWAY_HOST (the gRPC address, default 127.0.0.1; 0.0.0.0 in the Docker image),
//        GATEWAY_PUPPET + WECHATY_PUPPET_TOKEN (production: serve that real puppet instead)
//
// gRPC: PuppetServer from wechaty-puppet-service, plaintext (tls.disable), 127.0.0.1 only, the
// token checked on every call. The bot connects to it as to any puppet service.
//
// HTTP control API (127.0.0.1 only, JSON in and out):
//   GET  /health                 {ok, loggedIn, botId, refusedRooms: room creations refused}
//   POST /contacts {name, id?}   a mock contact (the same name twice gives the same contact)
//   GET  /contacts               [{id, name}]
//   POST /dm {from, text, timestamp?}  contact `from` (an id) DMs the bot; {id} of the message
//                                (timestamp, ms: a message sent earlier, as a replayed history)
//   POST /say {from, room, text, mentions?}   contact `from` says text in room `room`
//   GET  /sent?since=N           everything the bot sent, in order: [{seq, id, kind: dm|post,
//                                to, text, mentions, at}] with seq > N
//   GET  /rooms                  [{id, topic, ownerId, members}]
//   POST /rooms {owner, members, topic?}   a room a contact made by hand (the judge, when the
//                                bot's own room creation was refused), with the bot in it;
//                                {id, topic, ownerId, members}
//   POST /refuse-rooms {refuse}  while true, the bot's room creation fails
//   POST /shutdown               stop the servers and exit 0
//
// Quirks of the stock mock (1.19.4) overridden here, each checked against its source
// (dist/esm/src/puppet-mock.js): roomCreate() returns the constant 'mock_room_id' and makes no
// room; roomTopic() returns 'mock room topic' and stores nothing; messageSend*() return no
// message id (python-wechaty then loads a message with the empty id and fails after a send that
// worked); sends drop the mention list; roomAdd()/roomDel() change nothing.
// Kept as in WeChat 1.x gateways: setting a topic is silently ignored.

import http from 'node:http'
import process from 'node:process'

import * as PUPPET from 'wechaty-puppet'
import { WechatyBuilder } from 'wechaty'
import { PuppetMock, mock } from 'wechaty-puppet-mock'
import { PuppetServer } from 'wechaty-puppet-service'

const HOST = '127.0.0.1'

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

// Production (the Docker image): GATEWAY_PUPPET names a real puppet (an npm package installed
// into the image) and WECHATY_PUPPET_TOKEN is its own token; the gateway then serves that
// puppet, listening on GATEWAY_HOST (0.0.0.0 in a container), with no control API. The login
// session (Wechaty's memory card) is kept in WECHATY_PUPPET_SESSION_DIR, a volume.
if (process.env.GATEWAY_PUPPET) {
  if (process.env.WECHATY_PUPPET_SESSION_DIR) {
    process.chdir(process.env.WECHATY_PUPPET_SESSION_DIR)
  }
  const host = process.env.GATEWAY_HOST || '127.0.0.1'
  const real = WechatyBuilder.build({
    name: 'wolfjudge-gateway',
    puppet: process.env.GATEWAY_PUPPET,
    puppetOptions: process.env.WECHATY_PUPPET_TOKEN ? { token: process.env.WECHATY_PUPPET_TOKEN } : {},
  })
  real.on('scan', (qrcode, status) => console.log(
    `gateway: scan (${status}) https://wechaty.js.org/qrcode/${encodeURIComponent(qrcode)}`))
  real.on('login', user => console.log(`gateway: logged in as ${user}`))
  await real.init()
  const served = new PuppetServer({ endpoint: `${host}:${grpcPort}`, puppet: real.puppet, token, tls: { disable: true } })
  await served.start()
  console.log(`gateway ready grpc=${host}:${grpcPort} puppet=${process.env.GATEWAY_PUPPET}`)
  await new Promise(() => {}) // serve until killed; the mock gateway below never runs
}

const botName = process.env.GATEWAY_BOT_NAME || 'wolfjudge'

// WeChat: a mocker with the bot's own account, logged in whenever the puppet starts (the
// python client stops and starts the puppet through gRPC each time it connects).
const mocker = new mock.Mocker()
const botUser = mocker.createContact({ id: 'wxid_bot', name: botName })
mocker.use(m => {
  if (!m.puppet.isLoggedIn) {
    m.login(botUser)
  }
  return () => {}
})
const puppet = new PuppetMock({ mocker })

// The puppet is hosted by a Wechaty instance, as any puppet a gateway serves would be (it gives
// the puppet its memory); the Wechaty itself is not started: the remote bot drives the puppet.
const wechaty = WechatyBuilder.build({ puppet })
await wechaty.init()

let seq = 0
let counter = 0
const sent = []
let refuseRooms = false
let refusedRooms = 0
const nextId = prefix => `${prefix}-${Date.now().toString(36)}-${++counter}`

function emitMessage (payload) {
  mocker.MessageMock.create(payload) // stores the payload for messagePayload()
  puppet.emit('message', { messageId: payload.id })
  return payload.id
}

function isRoom (id) {
  return mocker.cacheRoomPayload.has(id)
}

async function dirtyRoom (roomId) {
  puppet.dirtyPayload(PUPPET.types.Dirty.Room, roomId)
  await new Promise(resolve => setImmediate(resolve))
  await new Promise(resolve => setImmediate(resolve))
}

// --- overrides of the stock mock ---------------------------------------------------------------
puppet.messageSendText = async (conversationId, text, mentionIdList = []) => {
  if (!puppet.isLoggedIn) throw new Error('not logged in')
  const room = isRoom(conversationId)
  if (room) {
    const members = mocker.roomPayload(conversationId).memberIdList
    if (!members.includes(botUser.id)) throw new Error(`not a member of ${conversationId}`)
  } else if (!mocker.cacheContactPayload.has(conversationId)) {
    throw new Error(`no such contact ${conversationId}`)
  }
  const id = nextId('out')
  const mentions = [...(mentionIdList || [])]
  sent.push({
    seq: ++seq, id, kind: room ? 'post' : 'dm', to: conversationId, text, mentions,
    at: new Date().toISOString(),
  })
  // Like WeChat, the bot's own message comes back to it as a message event.
  emitMessage({
    id,
    talkerId: botUser.id,
    timestamp: Date.now(),
    type: PUPPET.types.Message.Text,
    text,
    ...(room ? { roomId: conversationId, mentionIdList: mentions } : { listenerId: conversationId }),
  })
  return id
}

puppet.roomCreate = async (contactIdList, topic) => {
  if (refuseRooms) {
    refusedRooms++
    throw new Error('room creation refused (gateway control: refuse-rooms)')
  }
  for (const id of contactIdList) {
    if (!mocker.cacheContactPayload.has(id)) throw new Error(`no such contact ${id}`)
  }
  const id = `${nextId('room')}@chatroom`
  const members = [botUser.id, ...contactIdList.filter(c => c !== botUser.id)]
  mocker.createRoom({
    id, topic: topic || '', memberIdList: [...new Set(members)], ownerId: botUser.id,
    adminIdList: [],
  })
  return id
}

puppet.roomTopic = async (roomId, topic) => {
  if (typeof topic === 'undefined') return mocker.roomPayload(roomId).topic
  // a 1.x gateway silently ignores a new topic: so does this one
}

puppet.roomAdd = async (roomId, contactId) => {
  const payload = mocker.roomPayload(roomId)
  if (!payload.memberIdList.includes(contactId)) payload.memberIdList.push(contactId)
  await dirtyRoom(roomId)
}

puppet.roomDel = async (roomId, contactId) => {
  const payload = mocker.roomPayload(roomId)
  payload.memberIdList = payload.memberIdList.filter(id => id !== contactId)
  await dirtyRoom(roomId)
}

// --- contacts known before anyone connects (a restart keeps the contacts, as WeChat does) ---
const contactsByName = new Map()
for (const { id, name } of JSON.parse(process.env.GATEWAY_CONTACTS || '[]')) {
  mocker.createContact({ id, name })
  contactsByName.set(name, id)
}

// --- gRPC -------------------------------------------------------------------------------------
const server = new PuppetServer({
  endpoint: `${process.env.GATEWAY_HOST || HOST}:${grpcPort}`, // the control API stays on loopback
  puppet,
  token,
  tls: { disable: true },
})
await server.start()

// --- control API ------------------------------------------------------------------------------

function contactList () {
  return [...mocker.cacheContactPayload.values()].map(c => ({ id: c.id, name: c.name }))
}

function roomList () {
  return [...mocker.cacheRoomPayload.values()].map(r => ({
    id: r.id, topic: r.topic, ownerId: r.ownerId, members: [...r.memberIdList],
  }))
}

function contact (id) {
  if (!mocker.cacheContactPayload.has(id)) throw Object.assign(new Error(`no contact ${id}`), { status: 404 })
  return mocker.ContactMock.load(id)
}

const routes = {
  'GET /health': () => ({ ok: true, loggedIn: puppet.isLoggedIn, botId: botUser.id, refusedRooms }),
  'GET /contacts': () => contactList(),
  'POST /contacts': ({ name, id }) => {
    if (!name) throw Object.assign(new Error('name required'), { status: 400 })
    const known = contactsByName.get(name)
    if (known) return { id: known, name }
    const cid = id || `wxid_${nextId('c')}`
    mocker.createContact({ id: cid, name })
    contactsByName.set(name, cid)
    return { id: cid, name }
  },
  'POST /dm': ({ from, text, timestamp }) => {
    contact(from)
    if (!puppet.isLoggedIn) throw Object.assign(new Error('bot not logged in'), { status: 409 })
    const id = emitMessage({
      id: nextId('in'), talkerId: from, listenerId: botUser.id, timestamp: timestamp || Date.now(),
      type: PUPPET.types.Message.Text, text,
    })
    return { id }
  },
  'POST /say': ({ from, room, text, mentions }) => {
    contact(from)
    if (!isRoom(room)) throw Object.assign(new Error(`no room ${room}`), { status: 404 })
    if (!mocker.roomPayload(room).memberIdList.includes(from)) {
      throw Object.assign(new Error(`${from} is not in ${room}`), { status: 409 })
    }
    const id = emitMessage({
      id: nextId('in'), talkerId: from, roomId: room, mentionIdList: mentions || [],
      timestamp: Date.now(), type: PUPPET.types.Message.Text, text,
    })
    return { id }
  },
  'GET /sent': (_body, query) => {
    const since = Number(query.get('since') || 0)
    return sent.filter(s => s.seq > since)
  },
  'GET /rooms': () => roomList(),
  'POST /rooms': ({ owner, members, topic }) => {
    contact(owner)
    for (const m of members || []) contact(m)
    const id = `${nextId('room')}@chatroom`
    const memberIdList = [...new Set([owner, botUser.id, ...(members || [])])]
    mocker.createRoom({ id, topic: topic || '', memberIdList, ownerId: owner, adminIdList: [] })
    return roomList().find(r => r.id === id)
  },
  'POST /refuse-rooms': ({ refuse }) => {
    refuseRooms = refuse !== false
    return { refuse: refuseRooms }
  },
  'POST /shutdown': () => {
    setImmediate(shutdown)
    return { ok: true }
  },
}

const control = http.createServer((req, res) => {
  let raw = ''
  req.setEncoding('utf8')
  req.on('data', chunk => { raw += chunk })
  req.on('end', async () => {
    const url = new URL(req.url, `http://${HOST}`)
    const route = routes[`${req.method} ${url.pathname}`]
    let status = 200
    let out
    try {
      if (!route) throw Object.assign(new Error('not found'), { status: 404 })
      out = await route(raw ? JSON.parse(raw) : {}, url.searchParams)
    } catch (e) {
      status = e.status || 500
      out = { error: String(e.message || e) }
    }
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    res.end(JSON.stringify(out))
  })
})

let stopping = false
async function shutdown () {
  if (stopping) return
  stopping = true
  control.close()
  try { await server.stop() } catch (e) { console.error('gateway: stop:', e.message) }
  process.exit(0)
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)

control.listen(httpPort, HOST, () => {
  // tests wait for this line
  console.log(`gateway ready grpc=${HOST}:${grpcPort} http=${HOST}:${httpPort}`)
})
