// The mock gateway: wechaty-puppet-mock as WeChat, plus an HTTP control API for tests (loaded
// only when GATEWAY_PUPPET is empty or `mock`). See gateway.js for the protocol and the API.

import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import process from 'node:process'

import * as PUPPET from 'wechaty-puppet'
import { WechatyBuilder } from 'wechaty'
import { PuppetMock, mock } from 'wechaty-puppet-mock'
import { PuppetServer } from 'wechaty-puppet-service'

import { answerCapabilities } from './capabilities.js'
import { Mailbox } from './mailbox.js'
import { SendOnce } from './once.js'
import { authorized, status } from './status.js'

const HOST = '127.0.0.1'

export async function serveMock ({ grpcPort, httpPort, token, mailboxFile, mailboxMax }) {
  const botName = process.env.GATEWAY_BOT_NAME || 'wolfjudge'
  const without = (process.env.GATEWAY_MOCK_WITHOUT || '').split(',').filter(Boolean)

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
    if (refuseRooms || without.includes('roomCreate')) {
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
    saveRooms()
    return id
  }

  puppet.roomTopic = async (roomId, topic) => {
    if (typeof topic === 'undefined') return mocker.roomPayload(roomId).topic
    // a 1.x gateway silently ignores a new topic: so does this one
  }

  puppet.roomAdd = async (roomId, contactId) => {
    const payload = mocker.roomPayload(roomId)
    if (!payload.memberIdList.includes(contactId)) payload.memberIdList.push(contactId)
    saveRooms()
    await dirtyRoom(roomId)
  }

  puppet.roomDel = async (roomId, contactId) => {
    const payload = mocker.roomPayload(roomId)
    payload.memberIdList = payload.memberIdList.filter(id => id !== contactId)
    saveRooms()
    await dirtyRoom(roomId)
  }

  // --- contacts known before anyone connects (a restart keeps the contacts, as WeChat does) ---
  const contactsByName = new Map()
  for (const { id, name } of JSON.parse(process.env.GATEWAY_CONTACTS || '[]')) {
    mocker.createContact({ id, name })
    contactsByName.set(name, id)
  }

  // What it can do, when the bot asks (capabilities.js); GATEWAY_MOCK_WITHOUT (tests): methods
  // it pretends not to have, comma-separated (roomCreate, roomAdd, ...).
  answerCapabilities(puppet, 'wechaty-puppet-mock', without)

  // Messages are kept until the bot has committed them (mailbox.js).
  const mailbox = new Mailbox(puppet, { file: mailboxFile, max: mailboxMax })
  // An outbox row is sent once, across the bot's restarts (once.js).
  new SendOnce(puppet, { file: path.join(path.dirname(mailboxFile), 'sent-keys.jsonl') })

  // --- rooms survive a restart, as WeChat's do: kept next to the mailbox -------------------------
  const roomsFile = path.join(path.dirname(mailboxFile), 'mock-rooms.json')
  try {
    for (const r of JSON.parse(fs.readFileSync(roomsFile, 'utf8'))) mocker.createRoom(r)
  } catch (e) {
    if (e.code !== 'ENOENT') console.error(`gateway: ${roomsFile} unreadable: ${e.message}`)
  }
  function saveRooms () {
    const rooms = [...mocker.cacheRoomPayload.values()].map(r => ({
      id: r.id, topic: r.topic, memberIdList: [...r.memberIdList], ownerId: r.ownerId,
      adminIdList: [...(r.adminIdList || [])],
    }))
    fs.writeFileSync(`${roomsFile}.tmp`, JSON.stringify(rooms))
    fs.renameSync(`${roomsFile}.tmp`, roomsFile)
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
    'GET /health': () => ({
      ok: true, loggedIn: puppet.isLoggedIn, botId: botUser.id, refusedRooms,
      kept: mailbox.items.length, connected: mailbox.connected,
    }),
    'GET /status': (_body, _query, req) => {
      if (!authorized(req, token)) throw Object.assign(new Error('token required'), { status: 401 })
      return status({ puppet, puppetName: 'wechaty-puppet-mock', mailbox, without })
    },
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
      saveRooms()
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
        out = await route(raw ? JSON.parse(raw) : {}, url.searchParams, req)
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
}
