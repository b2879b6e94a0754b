// Feed compiled A2UI v0.9 messages to the real renderer core and report every error it raises.
//
// Input (stdin): {"jobs": [{"id": str, "messages": [A2UI v0.9 message, ...]}]}
// Output (stdout): {"results": {<id>: {<renderer>: Result}}} where <renderer> is
//   "web_core@0.11.0"  @a2ui/web_core 0.11.0 (what @a2ui/react and @a2ui/lit use), and
//   "web_core@0.10.4"  @a2ui/web_core 0.10.4 (what @copilotkit/a2ui-renderer 1.74 pins),
// and Result = {ok, errors: [str], warnings: [str], surfaces: [str], texts: [str],
//               images: [str], icons: [str], buttons: [{label, action}], components: int}.
//
// Each renderer gets a MessageProcessor with two catalogs holding the same basic-catalog
// component APIs and function implementations, registered under the two catalog ids in use:
//   https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json  (A2UI renderers)
//   https://a2ui.org/specification/v0_9/basic_catalog.json           (CopilotKit, see
//     @copilotkit/a2ui-renderer dist/react-renderer/a2ui-react/catalog/basic/index.mjs)
// so a message naming any other catalog id fails exactly as in a browser ("Catalog not found").
//
// After processMessages, the tree is walked from "root" the way CopilotKit's React adapter and
// the Lit elements do it: ComponentContext(surface, id, basePath) + GenericBinder(context,
// api.schema), recursing into `child` ids and the `{id, basePath}` items GenericBinder produces
// for ChildList templates. Every dynamic value (data bindings, formatDate / formatNumber /
// formatCurrency / formatString calls) is therefore resolved by the renderer's own code; any
// error it dispatches on the surface (surface.onError), logs (console.error / console.warn) or
// throws is reported. A component id that is referenced but missing, an unknown component
// type, or a cycle is an error too. With web_core 0.11 the NodeResolver (its renderer-neutral
// tree builder) is also run and its placeholder states are reported.

import * as wc11 from '@a2ui/web_core/v0_9';
import * as bc11 from '@a2ui/web_core/v0_9/basic_catalog';
import * as wc10 from 'web_core_copilotkit/v0_9';
import * as bc10 from 'web_core_copilotkit/v0_9/basic_catalog';

export const A2UI_BASIC_CATALOG_ID = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
export const COPILOTKIT_CATALOG_ID = 'https://a2ui.org/specification/v0_9/basic_catalog.json';

const RENDERERS = [
  {name: 'web_core@0.11.0', wc: wc11, bc: bc11},
  {name: 'web_core@0.10.4', wc: wc10, bc: bc10},
];

const MAX_NODES = 20000;

function errText(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}

function unwrap(wc, value) {
  // GenericBinder snapshots hold plain values; NodeResolver props hold signals/bindings.
  let v = value;
  for (let i = 0; i < 4; i++) {
    if (v && typeof v === 'object' && 'value' in v && typeof wc.isSignal === 'function' && wc.isSignal(v)) {
      v = v.value;
    } else if (v && typeof v === 'object' && 'value' in v && v.constructor && /Binding/.test(v.constructor.name)) {
      v = v.value;
    } else {
      break;
    }
  }
  return v;
}

async function runOne(renderer, messages) {
  const {wc, bc} = renderer;
  const result = {
    ok: false, errors: [], warnings: [], surfaces: [], texts: [], images: [], icons: [],
    buttons: [], components: 0,
  };
  const origError = console.error;
  const origWarn = console.warn;
  console.error = (...args) => result.errors.push('console.error: ' + args.map(errText).join(' '));
  console.warn = (...args) => result.warnings.push(args.map(errText).join(' '));
  const binders = [];
  try {
    const catalogs = [
      new wc.Catalog(A2UI_BASIC_CATALOG_ID, bc.BASIC_COMPONENTS, bc.BASIC_FUNCTIONS),
      new wc.Catalog(COPILOTKIT_CATALOG_ID, bc.BASIC_COMPONENTS, bc.BASIC_FUNCTIONS),
    ];
    const actions = [];
    const processor = new wc.MessageProcessor(catalogs, a => actions.push(a));
    processor.onSurfaceCreated(surface => {
      result.surfaces.push(surface.id);
      surface.onError.subscribe(err => result.errors.push(`surface error ${err.code}: ${err.message}`));
    });
    try {
      processor.processMessages(messages);
    } catch (e) {
      result.errors.push('processMessages: ' + errText(e));
    }
    for (const surfaceId of result.surfaces) {
      const surface = processor.model.getSurface(surfaceId);
      if (!surface) continue;
      if (!surface.componentsModel.get('root')) {
        result.errors.push(`surface ${surfaceId}: no component with id 'root'`);
        continue;
      }
      const stack = [];
      const visit = (id, basePath) => {
        if (result.components > MAX_NODES) throw new Error('tree too large');
        const key = `${id}@${basePath}`;
        if (stack.includes(key)) {
          result.errors.push(`cycle at ${key}`);
          return;
        }
        const model = surface.componentsModel.get(id);
        if (!model) {
          result.errors.push(`missing component '${id}' (referenced at ${basePath})`);
          return;
        }
        const api = surface.catalog.components.get(model.type);
        if (!api) {
          result.errors.push(`unknown component type '${model.type}' (${id})`);
          return;
        }
        result.components++;
        stack.push(key);
        const context = new wc.ComponentContext(surface, id, basePath);
        const binder = new wc.GenericBinder(context, api.schema);
        binders.push(binder);
        const props = binder.snapshot;
        const at = context.dataContext.path;
        if (model.type === 'Text') result.texts.push(props.text === undefined ? '<undefined>' : String(props.text));
        if (model.type === 'Image') result.images.push(String(props.url));
        if (model.type === 'Icon') result.icons.push(typeof props.name === 'string' ? props.name : JSON.stringify(props.name));
        if (model.type === 'Button') {
          const raw = model.properties.action;
          const label = surface.componentsModel.get(props.child)?.properties?.text;
          result.buttons.push({child: props.child, action: raw, resolvedLabel: label});
          if (typeof props.action !== 'function') result.errors.push(`button ${id}: action did not resolve to a handler`);
        }
        if (typeof props.child === 'string') visit(props.child, at);
        if (Array.isArray(props.children)) {
          for (const item of props.children) {
            if (typeof item === 'string') visit(item, at);
            else if (item && typeof item === 'object' && 'id' in item) visit(item.id, item.basePath || at);
            else result.errors.push(`component ${id}: unexpected child entry ${errText(item)}`);
          }
        } else if (props.children !== undefined) {
          result.errors.push(`component ${id}: children did not resolve to a list`);
        }
        stack.pop();
      };
      visit('root', '/');
      if (typeof wc.NodeResolver === 'function') {
        const resolver = new wc.NodeResolver(surface, surface.catalog);
        const seen = new Set();
        const walk = node => {
          if (!node || seen.has(node) || seen.size > MAX_NODES) return;
          seen.add(node);
          if (node.state !== 'resolved') result.errors.push(`NodeResolver: ${node.componentId} is ${node.state}`);
          const props = unwrap(wc, node.props);
          for (const v of Object.values(props || {})) {
            const val = unwrap(wc, v);
            if (wc.isComponentNode?.(val)) walk(val);
            else if (Array.isArray(val)) val.forEach(x => wc.isComponentNode?.(x) && walk(x));
          }
        };
        walk(unwrap(wc, resolver.rootNode));
        resolver.dispose();
      }
    }
    // Let any asynchronously dispatched surface errors arrive.
    await new Promise(r => setTimeout(r, 0));
  } catch (e) {
    result.errors.push('harness: ' + errText(e));
  } finally {
    for (const b of binders) {
      try {
        b.dispose();
      } catch {
        // ignore
      }
    }
    console.error = origError;
    console.warn = origWarn;
  }
  result.ok = result.errors.length === 0 && result.surfaces.length > 0;
  return result;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

const SELF_TEST = [
  {id: 'good', messages: [
    {version: 'v0.9', createSurface: {surfaceId: 's', catalogId: A2UI_BASIC_CATALOG_ID}},
    {version: 'v0.9', updateComponents: {surfaceId: 's', components: [
      {id: 'root', component: 'Column', children: {componentId: 't', path: '/items'}},
      {id: 't', component: 'Text', text: {call: 'formatCurrency', args: {value: {path: 'n'}, currency: 'USD'}, returnType: 'string'}},
    ]}},
    {version: 'v0.9', updateDataModel: {surfaceId: 's', path: '/', value: {items: [{n: 1.5}, {n: 2}]}}},
  ]},
  {id: 'bad-catalog', messages: [
    {version: 'v0.9', createSurface: {surfaceId: 's', catalogId: 'https://example.com/nope.json'}},
  ]},
  {id: 'bad-arg', messages: [
    {version: 'v0.9', createSurface: {surfaceId: 's', catalogId: COPILOTKIT_CATALOG_ID}},
    {version: 'v0.9', updateComponents: {surfaceId: 's', components: [
      {id: 'root', component: 'Text', text: {call: 'formatNumber', args: {value: {path: '/missing'}}, returnType: 'string'}},
    ]}},
  ]},
];

async function main() {
  const selfTest = process.argv.includes('--self-test');
  const input = selfTest ? {jobs: SELF_TEST} : JSON.parse(await readStdin());
  const results = {};
  for (const job of input.jobs) {
    results[job.id] = {};
    for (const renderer of RENDERERS) {
      results[job.id][renderer.name] = await runOne(renderer, job.messages);
    }
  }
  if (selfTest) {
    const ok = Object.values(results.good).every(r => r.ok && r.texts.join('|') === '$1.50|$2.00')
      && Object.values(results['bad-catalog']).every(r => !r.ok)
      && Object.values(results['bad-arg']).every(r => !r.ok);
    process.stdout.write(JSON.stringify({selfTest: ok ? 'pass' : 'fail', results}, null, 1) + '\n');
    process.exit(ok ? 0 : 1);
  }
  process.stdout.write(JSON.stringify({results}));
}

main().catch(e => {
  process.stdout.write(JSON.stringify({harnessError: errText(e)}));
  process.exit(2);
});
