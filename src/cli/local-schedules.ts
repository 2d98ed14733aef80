/** `baton schedules` in process: the runtime's schedule commands, answered as the API answers them. */
import { BatonError, createFailure } from '../failure.js';
import type { Runtime, ScheduleDefinition } from '../index.js';
import { toRunJson, toScheduleJson } from './api-json.js';
import type { ScheduleRequest } from './backend.js';

/** Answers a schedule command on the runtime `open()` gives (undefined: the file does not exist). */
export async function localSchedules(
  open: () => Runtime | undefined,
  request: ScheduleRequest,
  driven: Set<string>,
): Promise<unknown> {
  // Storing a schedule needs an agent (its runtimes tick it); reading needs the file.
  const rt = request.op === 'create' ? open()! : open();
  if (!rt) {
    if (request.op === 'list') return { schedules: [] };
    const id = request.op === 'create' ? request.body.id : request.id;
    throw new BatonError(createFailure('schedule.not_found', `Schedule '${id}' not found`));
  }
  switch (request.op) {
    case 'create': {
      const { session_id, catch_up, ...rest } = request.body;
      const definition = {
        ...rest,
        ...(session_id ? { sessionId: session_id } : {}),
        ...(catch_up ? { catchUp: catch_up } : {}),
      } as ScheduleDefinition;
      return toScheduleJson(await rt.schedule(definition));
    }
    case 'list':
      return { schedules: (await rt.listSchedules()).map(toScheduleJson) };
    case 'show':
      return toScheduleJson(await rt.getSchedule(request.id));
    case 'pause':
      return toScheduleJson(await rt.pauseSchedule(request.id));
    case 'resume':
      return toScheduleJson(await rt.resumeSchedule(request.id));
    case 'trigger': {
      const run = await rt.triggerSchedule(request.id);
      driven.add(run.id);
      return toRunJson(run);
    }
    case 'delete':
      await rt.deleteSchedule(request.id);
      return null;
  }
}
