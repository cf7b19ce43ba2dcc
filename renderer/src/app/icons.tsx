/**
 * The app's icons, all from lucide-react (inline SVG: no icon font, no remote content, nothing
 * the CSP has to allow). Every icon is decorative: the control around it carries the name (a
 * text label or an aria-label), so screen readers never read a glyph. Import icons from here,
 * not from lucide-react, so the set stays one size and stroke and can be swapped in one place.
 */
import {
  Brain,
  Check,
  ChevronDown,
  Copy,
  Download,
  Ellipsis,
  Menu,
  Monitor,
  Moon,
  Package,
  Paperclip,
  Pencil,
  Plus,
  Puzzle,
  Search,
  SendHorizontal,
  Settings,
  Shield,
  SlidersHorizontal,
  Sparkles,
  Square,
  Sun,
  ThumbsDown,
  ThumbsUp,
  Trash,
  X,
  type LucideIcon,
} from "lucide-react";

function icon(Glyph: LucideIcon, size = 16) {
  const Decorative = () => (
    <Glyph className="icon" size={size} strokeWidth={2} aria-hidden="true" focusable="false" />
  );
  Decorative.displayName = `${Glyph.displayName ?? "Lucide"}Icon`;
  return Decorative;
}

export const PencilIcon = icon(Pencil);
export const TrashIcon = icon(Trash);
export const CopyIcon = icon(Copy);
export const AttachIcon = icon(Paperclip);
export const MenuIcon = icon(Menu, 18);
export const DownloadIcon = icon(Download);
export const ThumbUpIcon = icon(ThumbsUp);
export const ThumbDownIcon = icon(ThumbsDown);
export const SendIcon = icon(SendHorizontal);
export const StopIcon = icon(Square);
export const PlusIcon = icon(Plus);
export const SearchIcon = icon(Search);
export const SettingsIcon = icon(Settings);
export const MemoryIcon = icon(Brain);
export const PrivacyIcon = icon(Shield);
export const AdaptersIcon = icon(Puzzle);
export const ModelIcon = icon(Package);
export const MoreIcon = icon(Ellipsis, 18);
export const CloseIcon = icon(X);
export const ChevronDownIcon = icon(ChevronDown);
export const CheckIcon = icon(Check);
export const SparklesIcon = icon(Sparkles);
export const ChatSettingsIcon = icon(SlidersHorizontal);
export const SunIcon = icon(Sun);
export const MoonIcon = icon(Moon);
export const SystemIcon = icon(Monitor);
