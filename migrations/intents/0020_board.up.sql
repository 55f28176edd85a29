-- The board reads an application's live intents and its most recently
-- completed tasks: both stay one short index walk however long the
-- history grows.
CREATE INDEX intents_live ON intents (app_id, id) WHERE status IN ('draft', 'running', 'stopped');
CREATE INDEX tasks_completed ON tasks (app_id, ended_at DESC) WHERE status = 'completed';
