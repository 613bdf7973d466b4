import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { configSchema } from '../../../src/gateway/config.js'
import { createGatewayMetrics } from '../../../src/gateway/metrics.js'

// Docker is not available where the tests run: check the deployment files' structure instead.
const compose = parse(readFileSync('docker-compose.yml', 'utf8'))
const nginx = readFileSync('deploy/nginx.conf.template', 'utf8')
const dockerfile = readFileSync('Dockerfile', 'utf8')

t.test('a load balancer, two or more gateway replicas and PostgreSQL with a volume', async (t) => {
  const always = Object.keys(compose.services).filter((name) => compose.services[name].profiles === undefined)
  t.same(always.sort(), ['gateway', 'lb', 'postgres', 'redis'])
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
  // npm start's command, word for word (its Node flags: docs/state.md, "Memory").
  const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  t.same(JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]'), start.split(' '), 'with npm start\'s Node flags')
  t.match(dockerfile, /USER node/)
  t.match(dockerfile, /npm ci --omit=dev/)
})

t.test('the observability profile: a collector, Jaeger, Prometheus and Grafana wired to the gateways', async (t) => {
  const { services } = compose
  const profiled = Object.keys(services).filter((name) => services[name].profiles !== undefined).sort()
  t.same(profiled, ['grafana', 'jaeger', 'otel-collector', 'prometheus'], 'only the observability services are in a profile')
  for (const name of profiled) t.same(services[name].profiles, ['observability'], name)
  const { gateway, prometheus, grafana } = services
  const environment = gateway.environment
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME', 'OTEL_TRACES_SAMPLER']) {
    t.match(environment[name], new RegExp(`^\\$\\{${name}:-`), `${name} is passed to the gateway`)
  }
  t.match(compose.services['otel-collector'].volumes, ['./deploy/otel-collector.yaml:/etc/otelcol/config.yaml:ro'])

  // The collector takes OTLP/HTTP on 4318 (what the gateways send) and passes traces to Jaeger.
  const collector = parse(readFileSync('deploy/otel-collector.yaml', 'utf8'))
  t.equal(collector.receivers.otlp.protocols.http.endpoint, '0.0.0.0:4318')
  t.same(collector.service.pipelines.traces.receivers, ['otlp'])
  t.equal(collector.exporters[collector.service.pipelines.traces.exporters[0]].endpoint, 'jaeger:4317')

  // Prometheus scrapes every replica's /metrics with the token, which only the environment holds.
  const scrape = parse(readFileSync('deploy/prometheus.yml', 'utf8')).scrape_configs[0]
  t.equal(scrape.metrics_path, '/metrics')
  t.same(scrape.dns_sd_configs, [{ names: ['gateway'], type: 'A', port: 8080, refresh_interval: '15s' }])
  t.equal(scrape.authorization.credentials_file, '/tmp/metrics-token')
  t.equal(prometheus.environment.METRICS_TOKEN, environment.METRICS_TOKEN, 'the same variable as the gateways\'')
  t.match(prometheus.entrypoint.join(' '), /printf %s "\$\$METRICS_TOKEN" > \/tmp\/metrics-token && exec \/bin\/prometheus --config\.file=\/etc\/prometheus\/prometheus\.yml/)
  t.ok(prometheus.volumes.includes('./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro'))
  t.match(nginx, /location = \/metrics \{\n\s+default_type application\/json;\n\s+return 404 /, 'the load balancer never serves /metrics')

  // Grafana: both data sources and the dashboard provisioned from deploy/grafana/.
  t.ok(grafana.volumes.includes('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro'))
  t.ok(grafana.volumes.includes('./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro'))
  const sources = parse(readFileSync('deploy/grafana/provisioning/datasources/datasources.yaml', 'utf8')).datasources
  t.same(sources.map((source: { uid: string, url: string }) => [source.uid, source.url]), [['prometheus', 'http://prometheus:9090'], ['jaeger', 'http://jaeger:16686']])
  const providers = parse(readFileSync('deploy/grafana/provisioning/dashboards/dashboards.yaml', 'utf8')).providers
  t.equal(providers[0].options.path, '/var/lib/grafana/dashboards')
})

t.test('the Grafana dashboard queries only metrics the gateway exports, with labels it sets', async (t) => {
  const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/a2a-converse.json', 'utf8'))
  const metrics = createGatewayMetrics(['demo'])
  const exported = new Map<string, Set<string>>()
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    const labels = new Set<string>(['instance', 'job', 'le'])
    for (const value of (metric as { values?: Array<{ labels: Record<string, unknown> }> }).values ?? []) for (const label of Object.keys(value.labels)) labels.add(label)
    exported.set(metric.name, labels)
  }
  // Labels declared but not yet set on any series (a fresh registry) are the metric's labelNames.
  for (const metric of metrics.registry.getMetricsAsArray()) {
    for (const label of (metric as unknown as { labelNames: string[] }).labelNames ?? []) exported.get(metric.name)?.add(label)
  }
  const expressions: string[] = dashboard.panels.flatMap((panel: { targets: Array<{ expr: string }> }) => panel.targets.map((target) => target.expr))
  t.ok(expressions.length >= 14)
  for (const expr of expressions) {
    for (const [, name] of expr.matchAll(/\b((?:a2a_converse|process|nodejs)_[a-z0-9_]+)/g)) {
      const base = name.replace(/_(bucket|count|sum)$/, '')
      t.ok(exported.has(base), `${name} is exported`)
      for (const [, label] of expr.matchAll(/\b([a-z_]+)(?:=~|!=|=)"/g)) t.ok(exported.get(base)?.has(label), `${name} has label ${label}`)
    }
  }
  const covered = new Set(expressions.flatMap((expr) => [...expr.matchAll(/\b(a2a_converse_[a-z0-9_]+)/g)].map((match) => match[1].replace(/_(bucket|count|sum)$/, ''))))
  t.same([...exported.keys()].filter((name) => name.startsWith('a2a_converse_') && !covered.has(name)), [], 'every gateway metric has a panel')
})
