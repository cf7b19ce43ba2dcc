/** Elements that keyboard shortcuts focus. */
export const COMPOSER_INPUT_ID = "composer-input";
export const SEARCH_INPUT_ID = "conversation-search";
