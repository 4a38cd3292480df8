import { it } from 'node:test'
import assert from 'node:assert/strict'
import { isLoopbackHost } from '../../src/loopback.ts'

it('loopback: localhost, 127.0.0.0/8 and ::1, bracketed or not', () => {
  for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
    assert.equal(isLoopbackHost(host), true, host)
})

it('not loopback: every other address and name, including the wildcard addresses', () => {
  for (const host of [
    '0.0.0.0',
    '::',
    '[::]',
    '10.0.0.1',
    '192.168.1.10',
    'example.com',
    'localhost.example.com',
    '128.0.0.1',
  ]) {
    assert.equal(isLoopbackHost(host), false, host)
  }
})
