import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'packages/*/dist/**', 'coverage/**', '.tap/**', 'node_modules/**'] })
]
