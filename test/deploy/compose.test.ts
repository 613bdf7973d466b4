import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { configSchema } from '../../src/gateway/config.js'

// Docker is not available where the tests run: check the deployment files' structure instead.
const compose = parse(readFileSync('docker-compose.yml', 'utf8'))
const nginx = readFileSync('deploy/nginx.conf.template', 'utf8')
const dockerfile = readFileSync('Dockerfile', 'utf8')

t.test('a load balancer, two or more gateway replicas and PostgreSQL with a volume', async (t) => {
  t.same(Object.keys(compose.services).sort(), ['gateway', 'lb', 'postgres', 'redis'])
  const { lb, gateway, postgres } = compose.services
  t.match(lb.image, /^nginx:/)
  t.same(lb.ports, ['$' + '{LB_PORT:-8080}:80'])
  t.same(lb.volumes, ['./deploy/nginx.conf.template:/etc/nginx/templates/default.conf.template:ro'])
  t.equal(lb.depends_on.gateway.condition, 'service_healthy')
  t.equal(gateway.build, '.')
  t.match(gateway.deploy.replicas, /^\$\{GATEWAY_REPLICAS:-([2-9]|\d\d+)\}$/)
  t.same(gateway.expose, ['8080'])
  t.equal(gateway.ports, undefined, 'replicas are reached through the load balancer only')
  t.equal(gateway.depends_on.postgres.condition, 'service_healthy')
  t.match(postgres.image, /^postgres:/)
  t.same(postgres.volumes, ['pgdata:/var/lib/postgresql/data'])
  t.ok('pgdata' in compose.volumes)
})

t.test('health checks: the gateway on /health/ready, PostgreSQL with pg_isready', async (t) => {
  const { gateway, postgres, lb } = compose.services
  t.match(gateway.healthcheck.test.join(' '), '/health/ready')
  t.match(postgres.healthcheck.test.join(' '), 'pg_isready')
  t.ok(lb.healthcheck)
  t.match(dockerfile, /HEALTHCHECK .*\n.*\/health\/live/)
})

t.test('every gateway setting comes from the environment', async (t) => {
  const environment = compose.services.gateway.environment
  for (const variable of Object.keys(configSchema.properties)) {
    t.ok(variable in environment, `${variable} is passed to the gateway`)
  }
  t.match(environment.DATABASE_URL, /^\$\{DATABASE_URL:-postgres:\/\/.+@postgres:5432\//)
  for (const [name, value] of Object.entries(environment)) {
    if (name === 'PORT' || name === 'HOST') continue
    t.match(value, new RegExp(`^\\$\\{${name}:-`), `${name} is overridable`)
  }
})

t.test("the load balancer's body limit and the cards' URL follow the gateway's settings", async (t) => {
  const { lb, gateway } = compose.services
  t.equal(lb.environment.BODY_LIMIT, gateway.environment.BODY_LIMIT, 'the same variable and default on both')
  t.match(nginx, /\n {2}client_max_body_size \$\{BODY_LIMIT\};\n/, 'the template takes it as is (bytes)')
  t.notMatch(nginx, /client_max_body_size \d/, 'no fixed cap')
  t.match(nginx, /error_page 413 = @payload_too_large;[\s\S]*"code":-32600/, 'a JSON-RPC error body, as the gateway answers')
  t.equal(gateway.environment.PUBLIC_URL, '$' + '{PUBLIC_URL:-http://localhost:$' + '{LB_PORT:-8080}}', 'cards point at the published port')
  t.same(lb.ports, ['$' + '{LB_PORT:-8080}:80'])
})

t.test('the load balancer is SSE-friendly', async (t) => {
  t.match(nginx, /proxy_buffering off;/)
  t.match(nginx, /proxy_read_timeout 1h;/)
  t.match(nginx, /proxy_http_version 1\.1;/)
  t.match(nginx, /server gateway:8080/)
  t.match(nginx, /X-Forwarded-Proto/)
})

t.test('the image is built and run on an active LTS Node line', async (t) => {
  const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1])
  t.same(images, ['node:24-bookworm-slim', 'node:24-bookworm-slim'])
})

t.test('the image runs the built gateway as a non-root user', async (t) => {
  t.match(dockerfile, /CMD \["node", "dist\/src\/gateway\/main\.js"\]/)
  t.match(dockerfile, /USER node/)
  t.match(dockerfile, /npm ci --omit=dev/)
})
