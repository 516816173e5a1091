// Any path the UI does not know.
import { nodesListUrl } from '../api.js';
import { fill, h } from '../dom.js';

export async function notFoundPage(main, { setTitle }) {
  setTitle('Page not found');
  fill(
    main,
    h(
      'section',
      { class: 'card narrow empty-state' },
      h('h1', {}, 'Page not found'),
      h('p', {}, 'There is nothing at this address.'),
      h('a', { class: 'btn btn-primary', href: nodesListUrl() }, 'Go to your nodes'),
    ),
  );
}

/** The node page's answer for a node that does not exist or is not yours (the API says 404 to both). */
export function nodeNotFound(main, nodeId, setTitle) {
  setTitle('Node not found');
  fill(
    main,
    h(
      'section',
      { class: 'card narrow empty-state', dataset: { testid: 'node-not-found' } },
      h('h1', {}, 'Node not found'),
      h('p', {}, 'No node of yours has the id ', h('code', {}, nodeId), '. It may have been typed wrong, or it belongs to another account.'),
      h('a', { class: 'btn btn-primary', href: nodesListUrl() }, 'Back to your nodes'),
    ),
  );
}
