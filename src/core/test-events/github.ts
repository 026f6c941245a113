import type { FixtureContext, FixturePayload, TestFixture } from './fixture.js';

/**
 * GitHub webhook deliveries (https://docs.github.com/webhooks/webhook-events-and-payloads):
 * complete `repository` and `sender` objects, as GitHub's published webhook schemas
 * (@octokit/openapi-webhooks, checked in test/core/test-events) require, and the
 * X-GitHub-Event / X-GitHub-Delivery / X-GitHub-Hook-* headers a consumer routes on.
 */

const API = 'https://api.github.com';
const WEB = 'https://github.com';

function user(login: string, id: number, type: 'User' | 'Organization' = 'User') {
  const url = `${API}/users/${login}`;
  return {
    login,
    id,
    node_id: `MDQ6VXNlcj${Buffer.from(String(id)).toString('base64').replace(/=+$/, '')}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: '',
    url,
    html_url: `${WEB}/${login}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type,
    user_view_type: 'public',
    site_admin: false,
  };
}

const OCTOCAT = () => user('octocat', 583231);

/** `timestamps: 'unix'` for push payloads, which carry created_at/pushed_at as numbers. */
function repository(c: FixtureContext, id: number, timestamps: 'iso' | 'unix' = 'iso') {
  const owner = OCTOCAT();
  const fullName = `${owner.login}/hello-world`;
  const url = `${API}/repos/${fullName}`;
  const time = (offsetS: number) => (timestamps === 'unix' ? c.unix(offsetS) : c.iso(offsetS));
  return {
    id,
    node_id: `R_kgDO${c.id('', 6)}`,
    name: 'hello-world',
    full_name: fullName,
    private: false,
    owner,
    html_url: `${WEB}/${fullName}`,
    description: 'My first repository on GitHub!',
    fork: false,
    url,
    forks_url: `${url}/forks`,
    keys_url: `${url}/keys{/key_id}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    teams_url: `${url}/teams`,
    hooks_url: `${url}/hooks`,
    issue_events_url: `${url}/issues/events{/number}`,
    events_url: `${url}/events`,
    assignees_url: `${url}/assignees{/user}`,
    branches_url: `${url}/branches{/branch}`,
    tags_url: `${url}/tags`,
    blobs_url: `${url}/git/blobs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    trees_url: `${url}/git/trees{/sha}`,
    statuses_url: `${url}/statuses/{sha}`,
    languages_url: `${url}/languages`,
    stargazers_url: `${url}/stargazers`,
    contributors_url: `${url}/contributors`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    commits_url: `${url}/commits{/sha}`,
    git_commits_url: `${url}/git/commits{/sha}`,
    comments_url: `${url}/comments{/number}`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    contents_url: `${url}/contents/{+path}`,
    compare_url: `${url}/compare/{base}...{head}`,
    merges_url: `${url}/merges`,
    archive_url: `${url}/{archive_format}{/ref}`,
    downloads_url: `${url}/downloads`,
    issues_url: `${url}/issues{/number}`,
    pulls_url: `${url}/pulls{/number}`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    labels_url: `${url}/labels{/name}`,
    releases_url: `${url}/releases{/id}`,
    deployments_url: `${url}/deployments`,
    created_at: time(-400 * 86_400),
    updated_at: c.iso(-60),
    pushed_at: time(-1),
    git_url: `git://github.com/${fullName}.git`,
    ssh_url: `git@github.com:${fullName}.git`,
    clone_url: `${WEB}/${fullName}.git`,
    svn_url: `${WEB}/${fullName}`,
    homepage: null,
    size: 108,
    stargazers_count: 80,
    watchers_count: 80,
    language: 'TypeScript',
    has_issues: true,
    has_projects: true,
    has_downloads: true,
    has_wiki: true,
    has_pages: false,
    has_discussions: false,
    forks_count: 9,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: 2,
    license: { key: 'mit', name: 'MIT License', spdx_id: 'MIT', url: `${API}/licenses/mit`, node_id: 'MDc6TGljZW5zZTEz' },
    allow_forking: true,
    is_template: false,
    web_commit_signoff_required: false,
    topics: ['webhooks'],
    visibility: 'public',
    forks: 9,
    open_issues: 2,
    watchers: 80,
    default_branch: 'main',
  };
}

/** A delivery: the body plus the headers GitHub sends with it. */
function delivery(c: FixtureContext, event: string, hookId: number, json: Record<string, unknown>): FixturePayload {
  return {
    json,
    headers: {
      'user-agent': `GitHub-Hookshot/${c.hex(4).slice(0, 7)}`,
      'x-github-event': event,
      'x-github-delivery': c.uuid(),
      'x-github-hook-id': String(hookId),
      'x-github-hook-installation-target-id': String((json.repository as { id: number }).id),
      'x-github-hook-installation-target-type': 'repository',
    },
  };
}

const commitAuthor = { name: 'The Octocat', email: 'octocat@github.com', username: 'octocat' };

export const GITHUB_FIXTURES: TestFixture[] = [
  {
    eventType: 'push',
    description: 'Two commits pushed to main',
    build(c) {
      const repo = repository(c, c.int(100_000_000, 900_000_000), 'unix');
      const before = c.hex(20);
      const commits = ['Add webhook handler', 'Verify signatures before parsing'].map((message, i) => {
        const id = c.hex(20);
        return {
          id,
          tree_id: c.hex(20),
          distinct: true,
          message,
          timestamp: c.iso(-120 + i * 60).replace('Z', '+00:00'),
          url: `${repo.html_url}/commit/${id}`,
          author: commitAuthor,
          committer: commitAuthor,
          added: i === 0 ? ['src/webhooks.ts'] : [],
          removed: [],
          modified: i === 0 ? [] : ['src/webhooks.ts'],
        };
      });
      const after = commits[commits.length - 1]!.id;
      return delivery(c, 'push', c.int(400_000_000, 500_000_000), {
        ref: 'refs/heads/main',
        before,
        after,
        repository: repo,
        pusher: { name: 'octocat', email: 'octocat@github.com' },
        sender: OCTOCAT(),
        created: false,
        deleted: false,
        forced: false,
        base_ref: null,
        compare: `${repo.html_url}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
        commits,
        head_commit: commits[commits.length - 1],
      });
    },
  },
  {
    eventType: 'pull_request.opened',
    description: 'A pull request opened from a feature branch',
    build(c) {
      const repo = repository(c, c.int(100_000_000, 900_000_000));
      const number = c.int(2, 500);
      const id = c.int(1_000_000_000, 2_000_000_000);
      const url = `${repo.url}/pulls/${number}`;
      const html = `${repo.html_url}/pull/${number}`;
      const author = user('hubot', 480938);
      const head = c.hex(20);
      const branch = (ref: string, sha: string) => ({ label: `octocat:${ref}`, ref, sha, user: OCTOCAT(), repo });
      return delivery(c, 'pull_request', c.int(400_000_000, 500_000_000), {
        action: 'opened',
        number,
        pull_request: {
          url,
          id,
          node_id: `PR_kwDO${c.id('', 10)}`,
          html_url: html,
          diff_url: `${html}.diff`,
          patch_url: `${html}.patch`,
          issue_url: `${repo.url}/issues/${number}`,
          number,
          state: 'open',
          locked: false,
          title: 'Retry failed deliveries with backoff',
          user: author,
          body: 'Retries a failed delivery three times with exponential backoff.\n\nCloses #1.',
          created_at: c.iso(),
          updated_at: c.iso(),
          closed_at: null,
          merged_at: null,
          merge_commit_sha: null,
          assignee: null,
          assignees: [],
          requested_reviewers: [],
          requested_teams: [],
          labels: [],
          milestone: null,
          draft: false,
          commits_url: `${url}/commits`,
          review_comments_url: `${url}/comments`,
          review_comment_url: `${repo.url}/pulls/comments{/number}`,
          comments_url: `${repo.url}/issues/${number}/comments`,
          statuses_url: `${repo.url}/statuses/${head}`,
          head: branch('retry-backoff', head),
          base: branch('main', c.hex(20)),
          _links: {
            self: { href: url },
            html: { href: html },
            issue: { href: `${repo.url}/issues/${number}` },
            comments: { href: `${repo.url}/issues/${number}/comments` },
            review_comments: { href: `${url}/comments` },
            review_comment: { href: `${repo.url}/pulls/comments{/number}` },
            commits: { href: `${url}/commits` },
            statuses: { href: `${repo.url}/statuses/${head}` },
          },
          author_association: 'CONTRIBUTOR',
          auto_merge: null,
          active_lock_reason: null,
          merged: false,
          mergeable: null,
          rebaseable: null,
          mergeable_state: 'unknown',
          merged_by: null,
          comments: 0,
          review_comments: 0,
          maintainer_can_modify: true,
          commits: 3,
          additions: 42,
          deletions: 7,
          changed_files: 2,
        },
        repository: repo,
        sender: author,
      });
    },
  },
  {
    eventType: 'ping',
    description: 'The ping GitHub sends when a webhook is created',
    build(c) {
      const repo = repository(c, c.int(100_000_000, 900_000_000));
      const hookId = c.int(400_000_000, 500_000_000);
      const hookUrl = `${repo.url}/hooks/${hookId}`;
      return delivery(c, 'ping', hookId, {
        zen: 'Design for failure.',
        hook_id: hookId,
        hook: {
          type: 'Repository',
          id: hookId,
          name: 'web',
          active: true,
          events: ['push', 'pull_request', 'issues'],
          config: { content_type: 'json', insecure_ssl: '0', url: `https://example.ngrok.app/webhooks/${c.provider}` },
          updated_at: c.iso(),
          created_at: c.iso(),
          url: hookUrl,
          test_url: `${hookUrl}/test`,
          ping_url: `${hookUrl}/pings`,
          deliveries_url: `${hookUrl}/deliveries`,
          last_response: { code: null, status: 'unused', message: null },
        },
        repository: repo,
        sender: OCTOCAT(),
      });
    },
  },
  {
    eventType: 'issues.opened',
    description: 'An issue opened with a label',
    build(c) {
      const repo = repository(c, c.int(100_000_000, 900_000_000));
      const number = c.int(2, 500);
      const url = `${repo.url}/issues/${number}`;
      const author = user('monalisa', 2);
      return delivery(c, 'issues', c.int(400_000_000, 500_000_000), {
        action: 'opened',
        issue: {
          url,
          repository_url: repo.url,
          labels_url: `${url}/labels{/name}`,
          comments_url: `${url}/comments`,
          events_url: `${url}/events`,
          html_url: `${repo.html_url}/issues/${number}`,
          id: c.int(1_000_000_000, 3_000_000_000),
          node_id: `I_kwDO${c.id('', 10)}`,
          number,
          title: 'Webhook deliveries time out after 10 s',
          user: author,
          labels: [{ id: 208045946, node_id: 'MDU6TGFiZWwyMDgwNDU5NDY=', url: `${repo.url}/labels/bug`, name: 'bug', description: "Something isn't working", color: 'd73a4a', default: true }],
          state: 'open',
          locked: false,
          assignee: null,
          assignees: [],
          milestone: null,
          comments: 0,
          created_at: c.iso(),
          updated_at: c.iso(),
          closed_at: null,
          author_association: 'NONE',
          active_lock_reason: null,
          body: 'Deliveries larger than 1 MB time out. Steps to reproduce: …',
          reactions: { url: `${url}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
          timeline_url: `${url}/timeline`,
          performed_via_github_app: null,
          state_reason: null,
        },
        repository: repo,
        sender: author,
      });
    },
  },
];
