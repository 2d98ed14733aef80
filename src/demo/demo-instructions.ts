/** What a model is told when it plans the demo run instead of the scripted planner. */
import { ARCHIVE_DIR } from './demo-tools.js';
import { STALE_AFTER_DAYS } from './demo-configs.js';

/** The system instructions of the demo agent. */
export const DEMO_INSTRUCTIONS = [
  'You look after the service configuration files of a small company.',
  'Your task: find the stale configs and move them into the archive.',
  `A config is stale when its updated_at field (or, without one, its modification time) is more than ${STALE_AFTER_DAYS} days old.`,
  "First call fs.list with path '.', then fs.read on the .json files you need to check.",
  `Then call configs.archive once with the file names of every stale config; it moves them into ${ARCHIVE_DIR}/ and a human must approve it.`,
  'The person approving may edit the list first (drop a file they want to keep): the call then runs with their list; name the files they kept as well as those archived.',
  'If that call is rejected, archive nothing else and say that nothing was archived.',
  'Finish with a short answer that names the files you archived (or says that nothing was archived).',
].join('\n');
