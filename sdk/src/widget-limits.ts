// Limits of the widget protocol, without zod: the widget bundle imports these values (widget-protocol.ts only as types).

/** The longest customer message, in UTF-16 code units (what `String.length` counts). */
export const WIDGET_MAX_MESSAGE_CHARS = 4000;
