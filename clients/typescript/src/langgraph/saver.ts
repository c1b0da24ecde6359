/**
 * `CheckpointdSaver`: a LangGraph.js checkpointer backed by a checkpointd server.
 *
 * `graph.compile({ checkpointer: new CheckpointdSaver({ baseUrl }) })` is the only change a graph
 * needs. How LangGraph's model maps onto checkpointd is docs/langgraph-mapping.md, shared with
 * Python's saver: one (thread, namespace) is one run, a checkpoint is a labelled save at the
 * run's next step, the `messages` channel lives in the run's append-only message log, and
 * pending writes are tool-journal entries at the checkpoint's step.
 */

import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";

import { createCheckpointClient, type CheckpointClient, type CheckpointdClientOptions } from "../client.js";
import type { Core } from "./core.js";
import { checkPolicy, type CorruptionPolicy, type SaverLogger } from "./fallback.js";
import { getTuple, listTuples } from "./reads.js";
import { RunCache } from "./runs.js";
import { deleteForRuns, deleteThread, prune, type PruneStrategy } from "./threads.js";
import { put, putWrites } from "./writes.js";

/** Each saver's shared state, for the exactly-once tools (./tools.ts), which journal through it. */
const cores = new WeakMap<CheckpointdSaver, Core>();

/** The shared state of `saver`: the exactly-once tools write its runs' journals through it. */
export function coreOf(saver: CheckpointdSaver): Core {
  const core = cores.get(saver);
  if (core === undefined) throw new Error("a CheckpointdSaver that was not constructed");
  return core;
}

export interface CheckpointdSaverOptions extends Partial<CheckpointdClientOptions> {
  /** A ready CheckpointService client; otherwise one is made from the client options. */
  client?: CheckpointClient;
  /** LangGraph's serializer; its default (`JsonPlusSerializer`) when absent. */
  serde?: SerializerProtocol;
  /**
   * The channel kept in the run's message log (`MessagesAnnotation` uses `messages`, the
   * default); null keeps every channel in the checkpoint state.
   */
  messagesChannel?: string | null;
  /** Corrupt newest checkpoints: serve the newest valid one and say so ("warn"), or throw. */
  onCorrupt?: CorruptionPolicy;
  /** Take each thread written with a new fencing epoch and never adopt another writer's. */
  exclusive?: boolean;
  /** Where fallbacks and dropped writes are reported; `console` by default. */
  logger?: SaverLogger;
}

/**
 * A LangGraph `BaseCheckpointSaver` that stores checkpoints in checkpointd.
 *
 * Every checkpoint is saved with a client checksum (checksum v1) that the server checks on save
 * and verifies on every read. The latest checkpoint of a thread skips corrupt ones, as
 * `LoadLatest` does, and says so: a log line, and `checkpointd_fallback` in the tuple's
 * metadata; `onCorrupt: "raise"` refuses instead. A corrupt checkpoint asked for by id throws
 * the server's DATA_LOSS; `list` leaves corrupt checkpoints out with a log line.
 *
 * `exclusive: true` makes this saver the only writer of each thread it writes (a saver
 * superseded by another exclusive one gets `ThreadTakenOver`). Off by default: LangGraph lets
 * any process write a thread in turn.
 */
export class CheckpointdSaver extends BaseCheckpointSaver {
  /** The CheckpointService client this saver calls. */
  readonly client: CheckpointClient;
  readonly messagesChannel: string | undefined;
  readonly onCorrupt: CorruptionPolicy;
  readonly exclusive: boolean;
  private readonly core: Core;

  constructor(options: CheckpointdSaverOptions) {
    super(options.serde);
    const { client, serde: _serde, messagesChannel, onCorrupt, exclusive, logger, ...clientOptions } = options;
    if (client === undefined && clientOptions.baseUrl === undefined) {
      throw new Error("CheckpointdSaver needs a baseUrl (e.g. http://127.0.0.1:50051) or a client");
    }
    this.client = client ?? createCheckpointClient(clientOptions as CheckpointdClientOptions);
    this.messagesChannel = messagesChannel === null ? undefined : (messagesChannel ?? "messages");
    this.onCorrupt = checkPolicy(onCorrupt ?? "warn");
    this.exclusive = exclusive ?? false;
    this.core = {
      client: this.client,
      serde: this.serde,
      channel: this.messagesChannel,
      onCorrupt: this.onCorrupt,
      exclusive: this.exclusive,
      logger: logger ?? console,
      runs: new RunCache(),
      legacyJournal: false,
    };
    cores.set(this, this.core);
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return getTuple(this.core, config.configurable, (current) => this.getNextVersion(current));
  }

  override list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return listTuples(this.core, config.configurable, options ?? {}, (current) => this.getNextVersion(current));
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    await put(this.core, config.configurable, checkpoint, metadata as Record<string, unknown>, newVersions);
    const configurable = config.configurable ?? {};
    return {
      configurable: {
        thread_id: configurable["thread_id"],
        checkpoint_ns: typeof configurable["checkpoint_ns"] === "string" ? configurable["checkpoint_ns"] : "",
        checkpoint_id: checkpoint.id,
      },
    };
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    return putWrites(this.core, config.configurable, writes, taskId, taskPath);
  }

  /** Deletes every namespace of a thread: its runs, their logs and journals. */
  override deleteThread(threadId: string): Promise<void> {
    return deleteThread(this.core, threadId);
  }

  /** Deletes the checkpoints LangGraph runs `runIds` made (their metadata `run_id`). */
  deleteForRuns(runIds: readonly string[]): Promise<void> {
    return deleteForRuns(this.core, runIds);
  }

  /**
   * `keep_latest` keeps each namespace's newest checkpoint; `delete` deletes the threads. The
   * message log and tool journal stay (they are append-only and verified).
   */
  prune(threadIds: readonly string[], strategy: PruneStrategy = "keep_latest"): Promise<void> {
    return prune(this.core, threadIds, strategy);
  }
}
