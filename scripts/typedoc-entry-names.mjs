// TypeDoc plugin: names each documented module by the import path users
// write (`payhook`, `payhook/web`, …) instead of its file name (`index`).
import { Converter, ReflectionKind } from 'typedoc';

const NAMES = {
  index: 'payhook',
  web: 'payhook/web',
  node: 'payhook/node',
  redis: 'payhook/redis',
  cloudflare: 'payhook/cloudflare',
  sqlite: 'payhook/sqlite',
  testing: 'payhook/testing',
  explain: 'payhook/explain',
};

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const name = NAMES[module.name] ?? NAMES[module.name.split('/').at(-2)];
      if (name) module.name = name;
    }
  });
}
