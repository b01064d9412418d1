-- The customer's locale (a language tag such as es or es-MX), as the widget's init said: the model answers in it and
-- confirmations are worded in it. NULL: unknown (WhatsApp customers use channels.whatsapp.locale).
ALTER TABLE customers ADD COLUMN locale text;
