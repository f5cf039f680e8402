// hybrid-memory for opencode: long-term memory of this machine's sessions.
// This file was written by hybrid-memory install opencode; hybrid-memory uninstall opencode removes it.
//
// It runs the same hooks as the Claude Code plugin: at a session's first prompt the project's
// context, at each prompt what the memory holds about it (both put in the system prompt), and when
// the session goes idle its messages captured (`hybrid-memory hook opencode stop` reads them).
import { spawn } from "node:child_process";

const COMMAND = __HYBRID_MEMORY_COMMAND__;

function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(COMMAND, ["hook", "opencode", event], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve(null);
      return;
    }
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("error", () => resolve(null));
    child.on("close", () => {
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function contextOf(answer) {
  const text = answer?.hookSpecificOutput?.additionalContext;
  return typeof text === "string" && text ? text : null;
}

async function messagesOf(client, sessionID) {
  const answer = await client.session.messages({ path: { id: sessionID } });
  return Array.isArray(answer) ? answer : answer?.data ?? [];
}

export const HybridMemory = async ({ client, directory }) => {
  const started = new Map(); // session id -> its session-start context ("" when none)
  const prompted = new Map(); // session id -> the context of its latest prompt
  const capture = async (sessionID) => {
    const messages = await messagesOf(client, sessionID);
    if (messages.length) await hook("stop", { session_id: sessionID, cwd: directory, messages });
  };
  return {
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      const base = { session_id: sessionID, cwd: directory };
      if (!started.has(sessionID)) {
        started.set(sessionID, contextOf(await hook("session-start", base)) ?? "");
      }
      const prompt = (output.parts ?? [])
        .filter((part) => part.type === "text" && !part.synthetic && typeof part.text === "string")
        .map((part) => part.text)
        .join("\n");
      const found = prompt ? contextOf(await hook("user-prompt-submit", { ...base, prompt })) : null;
      prompted.set(sessionID, found ?? "");
    },
    "experimental.chat.system.transform": async (input, output) => {
      for (const text of [started.get(input.sessionID), prompted.get(input.sessionID)]) {
        if (text) output.system.push(text);
      }
    },
    event: async ({ event }) => {
      if (event?.type === "session.idle" && event.properties?.sessionID) {
        await capture(event.properties.sessionID).catch(() => {});
      }
    },
  };
};
