// Types of build-if-stale.js (plain JavaScript: it runs before anything is compiled).
export declare const INPUTS: readonly string[]
export declare const STAMP: string
export declare function isStale (root: string): boolean
export declare function buildIfStale (root: string, log?: (line: string) => void): number
