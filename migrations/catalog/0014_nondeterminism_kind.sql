-- A failure kind of its own for a replay that no longer matches its journal (src/job/states.ts): its count per home
-- and type. 0 for the rows a home reported before it (a home older than the kind sends none).
ALTER TABLE `home_type` ADD `failed_nondeterminism` integer DEFAULT 0 NOT NULL;