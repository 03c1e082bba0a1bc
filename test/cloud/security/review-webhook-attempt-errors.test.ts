/**
 * Security review, item 5 (Low): a failed delivery recorded the resolver's answer, `DNS lookup
 * 10.66.77.88 (host: payroll-db.corp.internal) is not allowed`, where any console viewer of the tenant
 * reads it: an oracle for the internal DNS. The attempt log now keeps a generic reason, "the address
 * is not allowed"; the address and host go to the operator's log only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookDispatcher } from '../../../cloud/features/webhooks/dispatcher.js'
import { WebhookSender } from '../../../cloud/features/webhooks/webhook-sender.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../cloud/settings/webhook-settings.js'
import { TestCloud } from '../../support/cloud-harness.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole, waitForDelivery } from '../features/webhooks/webhook-kit.js'

describe('what a refused webhook attempt tells the tenant', () => {
  const receiver = new WebhookReceiver()
  // No dispatcher in the app: the test runs its own, to read what it logs for the operator.
  const cloud = new TestCloud('sqlite')
  beforeAll(async () => {
    await receiver.start()
    await cloud.start()
  })
  afterAll(async () => {
    await cloud.stop()
    await receiver.stop()
  })

  it('security review #5: records "the address is not allowed", and only the operator\'s log names the address and host', async () => {
    const settings = { ...DEFAULT_WEBHOOK_SETTINGS, retrySchedule: [0] }
    const logged: { level: string; obj: Record<string, unknown>; msg: string }[] = []
    const log =
      (level: string) =>
      (obj: unknown, msg?: string): void => {
        logged.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? '' })
      }
    const dispatcher = new WebhookDispatcher({
      stores: cloud.services.stores,
      dialect: cloud.kind,
      secretBox: cloud.database.secretBox,
      outbox: cloud.services.outbox,
      audit: cloud.services.audit,
      sender: new WebhookSender({ policy: cloud.services.urlPolicy, timeoutSeconds: 5 }),
      settings,
      log: { error: log('error'), warn: log('warn'), debug: log('debug') } as never,
      now: cloud.now,
    })
    dispatcher.start()
    try {
      const api = await newTenantConsole(cloud)
      // A name that passes registration and resolves, when connecting, to loopback (as an internal
      // name resolves to a private address): refused on the address DNS returned.
      const { id } = await createEndpoint(api, { url: `https://localhost:${receiver.port}/internal` })
      expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
      const delivery = await waitForDelivery(api, id, (d) => d.attempts >= 1)
      const [attempt] = delivery.attemptLog
      expect(attempt).toMatchObject({ responseStatus: null, error: 'the address is not allowed' })
      // Nothing the console shows of the delivery names what the host resolved to.
      const shown = JSON.stringify((await api.get(`/webhook-deliveries/${delivery.id}`)).json())
      expect(shown).not.toMatch(/127\.0\.0\.1|::1|DNS lookup|family:/)

      // The operator's log has it all.
      const refusal = logged.find((l) => l.obj.deliveryId === delivery.id && l.level === 'warn')
      expect(refusal?.obj).toMatchObject({ endpointId: id, error: 'the address is not allowed' })
      expect(String(refusal?.obj.detail)).toMatch(
        /DNS lookup (127\.0\.0\.1|::1).*host:localhost.*is not allowed/,
      )
    } finally {
      await dispatcher.stop()
    }
  })
})
