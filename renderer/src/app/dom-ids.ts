/** Elements that keyboard shortcuts focus. */
export const COMPOSER_INPUT_ID = "composer-input";
export const SEARCH_INPUT_ID = "conversation-search";
/** The header button that shows the conversation drawer at narrow widths (focus returns there). */
export const NAV_TOGGLE_ID = "conversation-nav-toggle";
