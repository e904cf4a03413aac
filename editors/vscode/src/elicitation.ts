// acp/elicitation: an agent's structured question, asked with VS Code's own quick picks and
// input boxes, one field at a time (enums and booleans are picked, the rest typed).

import * as vscode from "vscode";

import type * as protocol from "./protocol";

type Field = protocol.ElicitationField;

/** The choices of a field answered by picking, or undefined when it is typed. */
export function fieldChoices(field: Field): { label: string; value: unknown }[] | undefined {
  if (field.type === "boolean") {
    return [
      { label: "Yes", value: true },
      { label: "No", value: false },
    ];
  }
  if (Array.isArray(field.enum)) {
    return field.enum.map((v) => ({ label: String(v), value: v }));
  }
  if (Array.isArray(field.oneOf)) {
    return field.oneOf.map((o) => ({ label: o.title ?? String(o.const), value: o.const }));
  }
  return undefined;
}

/** A typed answer as the field's JSON type, or an error message. */
export function parseTyped(field: Field, text: string): { value?: unknown; error?: string } {
  if (field.type === "number" || field.type === "integer") {
    const n = Number(text);
    if (text.trim() === "" || Number.isNaN(n)) {
      return { error: "a number, please" };
    }
    if (field.type === "integer" && !Number.isInteger(n)) {
      return { error: "a whole number, please" };
    }
    return { value: n };
  }
  if (field.type === "array") {
    return { value: text.split(",").map((s) => s.trim()).filter((s) => s !== "") };
  }
  return { value: text };
}

export async function askElicitation(params: protocol.ElicitationParams): Promise<protocol.ElicitationResult> {
  const request = params.request;
  const heading = `${params.agent}: ${request.message}`;
  if (request.mode === "url" && typeof request.url === "string") {
    const open = await vscode.window.showInformationMessage(heading, { modal: false }, "Open", "Decline");
    if (open === "Open") {
      await vscode.env.openExternal(vscode.Uri.parse(request.url));
      return { action: "accept" };
    }
    return { action: open === "Decline" ? "decline" : "cancel" };
  }
  const schema = request.requestedSchema ?? {};
  const required = new Set(schema.required ?? []);
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const title = `${heading} — ${field.title ?? name}${required.has(name) ? "" : " (optional)"}`;
    const choices = fieldChoices(field);
    if (choices) {
      const picked = await vscode.window.showQuickPick(
        choices.map((c) => ({ label: c.label, value: c.value, description: field.description ?? undefined })),
        { title, ignoreFocusOut: true },
      );
      if (!picked) {
        return { action: "cancel" };
      }
      content[name] = picked.value;
      continue;
    }
    const text = await vscode.window.showInputBox({
      title,
      prompt: field.description ?? undefined,
      value: field.default === undefined ? "" : String(field.default),
      ignoreFocusOut: true,
      validateInput: (value) => (value === "" && !required.has(name) ? undefined : parseTyped(field, value).error),
    });
    if (text === undefined) {
      return { action: "cancel" };
    }
    if (text !== "" || required.has(name)) {
      content[name] = parseTyped(field, text).value;
    }
  }
  return { action: "accept", content };
}
