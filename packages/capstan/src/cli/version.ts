import { PACKAGE_JSON } from "./package-root.ts";

/** This package's version, from its package.json. */
export const CAPSTAN_VERSION: string = PACKAGE_JSON.version;
