import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * GitLab webhooks (https://docs.gitlab.com/user/project/integrations/webhook_events/): routed by
 * X-Gitlab-Event and `object_kind`, authenticated by the X-Gitlab-Token secret token.
 */

const PROJECT = {
  id: 15_081_312,
  name: 'hello-world',
  description: 'A project for webhook tests',
  web_url: 'https://gitlab.com/acme/hello-world',
  avatar_url: null,
  git_ssh_url: 'git@gitlab.com:acme/hello-world.git',
  git_http_url: 'https://gitlab.com/acme/hello-world.git',
  namespace: 'acme',
  visibility_level: 0,
  path_with_namespace: 'acme/hello-world',
  default_branch: 'main',
  ci_config_path: '',
  homepage: 'https://gitlab.com/acme/hello-world',
  url: 'git@gitlab.com:acme/hello-world.git',
  ssh_url: 'git@gitlab.com:acme/hello-world.git',
  http_url: 'https://gitlab.com/acme/hello-world.git',
};
const USER = { id: 4_215_001, name: 'Jenny Rosen', username: 'jrosen', avatar_url: 'https://secure.gravatar.com/avatar/00000000000000000000000000000000?s=80&d=identicon', email: '[REDACTED]' };

function hook(c: FixtureContext, event: string, json: Record<string, unknown>) {
  return {
    json,
    headers: {
      'user-agent': 'GitLab/17.9.0-pre',
      'x-gitlab-event': event,
      'x-gitlab-event-uuid': c.uuid(),
      'x-gitlab-webhook-uuid': c.uuid(),
      'x-gitlab-instance': 'https://gitlab.com',
    },
  };
}

function commit(c: FixtureContext, message: string, offsetS: number) {
  const id = c.hex(20);
  return { id, message, title: message.split('\n')[0], timestamp: c.iso(offsetS).replace('Z', '+00:00'), url: `${PROJECT.web_url}/-/commit/${id}`, author: { name: USER.name, email: 'jenny@example.com' }, added: [], modified: ['src/webhooks.ts'], removed: [] };
}

export const GITLAB_FIXTURES: TestFixture[] = [
  {
    eventType: 'push',
    description: 'Two commits pushed to main (Push Hook)',
    build(c) {
      const commits = [commit(c, 'Add webhook handler\n', -120), commit(c, 'Verify the secret token\n', -60)];
      const after = commits[1]!.id;
      return hook(c, 'Push Hook', {
        object_kind: 'push',
        event_name: 'push',
        before: c.hex(20),
        after,
        ref: 'refs/heads/main',
        ref_protected: true,
        checkout_sha: after,
        message: null,
        user_id: USER.id,
        user_name: USER.name,
        user_username: USER.username,
        user_email: '',
        user_avatar: USER.avatar_url,
        project_id: PROJECT.id,
        project: PROJECT,
        commits,
        total_commits_count: commits.length,
        push_options: {},
        repository: { name: PROJECT.name, url: PROJECT.url, description: PROJECT.description, homepage: PROJECT.homepage, git_http_url: PROJECT.git_http_url, git_ssh_url: PROJECT.git_ssh_url, visibility_level: 0 },
      });
    },
  },
  {
    eventType: 'merge_request',
    description: 'A merge request opened (Merge Request Hook)',
    build(c) {
      const iid = c.int(2, 500);
      const last = commit(c, 'Retry failed deliveries with backoff\n', -30);
      return hook(c, 'Merge Request Hook', {
        object_kind: 'merge_request',
        event_type: 'merge_request',
        user: USER,
        project: PROJECT,
        object_attributes: {
          id: c.int(300_000_000, 400_000_000),
          iid,
          target_branch: 'main',
          source_branch: 'retry-backoff',
          source_project_id: PROJECT.id,
          target_project_id: PROJECT.id,
          author_id: USER.id,
          assignee_ids: [],
          reviewer_ids: [],
          title: 'Retry failed deliveries with backoff',
          description: 'Retries a failed delivery three times with exponential backoff.',
          state: 'opened',
          merge_status: 'checking',
          detailed_merge_status: 'checking',
          draft: false,
          work_in_progress: false,
          created_at: c.iso().replace('T', ' ').replace('Z', ' UTC'),
          updated_at: c.iso().replace('T', ' ').replace('Z', ' UTC'),
          url: `${PROJECT.web_url}/-/merge_requests/${iid}`,
          source: PROJECT,
          target: PROJECT,
          last_commit: last,
          labels: [],
          action: 'open',
        },
        labels: [],
        changes: {},
        repository: { name: PROJECT.name, url: PROJECT.url, description: PROJECT.description, homepage: PROJECT.homepage },
      });
    },
  },
  {
    eventType: 'pipeline',
    description: 'A pipeline on main succeeded (Pipeline Hook)',
    build(c) {
      const id = c.int(1_000_000_000, 2_000_000_000);
      const sha = c.hex(20);
      const job = (name: string, stage: string, offsetS: number) => ({
        id: c.int(8_000_000_000, 9_000_000_000),
        stage,
        name,
        status: 'success',
        created_at: c.iso(-300).replace('T', ' ').replace('Z', ' UTC'),
        started_at: c.iso(offsetS - 60).replace('T', ' ').replace('Z', ' UTC'),
        finished_at: c.iso(offsetS).replace('T', ' ').replace('Z', ' UTC'),
        duration: 58.3,
        queued_duration: 1.2,
        failure_reason: null,
        when: 'on_success',
        manual: false,
        allow_failure: false,
        user: USER,
        runner: { id: 12_270_837, description: 'gitlab-runner', runner_type: 'instance_type', active: true, is_shared: true, tags: [] },
        artifacts_file: { filename: null, size: null },
        environment: null,
      });
      return hook(c, 'Pipeline Hook', {
        object_kind: 'pipeline',
        object_attributes: {
          id,
          iid: c.int(100, 999),
          name: null,
          ref: 'main',
          tag: false,
          sha,
          before_sha: c.hex(20),
          source: 'push',
          status: 'success',
          detailed_status: 'passed',
          stages: ['test', 'deploy'],
          created_at: c.iso(-300).replace('T', ' ').replace('Z', ' UTC'),
          finished_at: c.iso().replace('T', ' ').replace('Z', ' UTC'),
          duration: 241,
          queued_duration: 3,
          variables: [],
          url: `${PROJECT.web_url}/-/pipelines/${id}`,
        },
        merge_request: null,
        user: USER,
        project: PROJECT,
        commit: commit(c, 'Verify the secret token\n', -400),
        builds: [job('test', 'test', -120), job('deploy', 'deploy', 0)],
      });
    },
  },
];
