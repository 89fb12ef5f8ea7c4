// Preloaded into a gateway under test (NODE_OPTIONS=--import): every name but localhost fails
// to resolve, so a real puppet meets "no network to WeChat" and nothing leaves loopback.
import dns from 'node:dns'

const LOCAL = new Set(['localhost', '127.0.0.1', '::1'])
const refuse = host => Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`),
  { code: 'ENOTFOUND', hostname: host, syscall: 'getaddrinfo' })

const lookup = dns.lookup
dns.lookup = function (host, options, callback) {
  if (typeof options === 'function') [callback, options] = [options, {}]
  if (LOCAL.has(host)) return lookup.call(dns, host, options, callback)
  process.nextTick(() => callback(refuse(host)))
}
const lookupPromise = dns.promises.lookup
dns.promises.lookup = (host, options) => LOCAL.has(host)
  ? lookupPromise.call(dns.promises, host, options)
  : Promise.reject(refuse(host))
